// What a rolling restart costs the events in flight (O21): nodes of one bridge (`node bin/bridge.js serve` on a
// PostgreSQL database of the run's own and Redis under a prefix of its own) behind a round-robin TCP proxy, as an
// operator runs them behind nginx; the SDK's app clients and agent connector connect and reconnect through it. The
// apps send events at a steady rate to agents whose handler streams for a while; each node in turn is stopped
// (SIGTERM; --kill: SIGKILL) and started again with its NODE_ID on its port. Every event's outcome (its reply, or
// an error code) and how long after it was sent it ended, overall and for each stop (the events sent before the
// next stop and ended after this one). The figure to hold against the documented bound (~16 s: nodeExpiryMs +
// nodeHeartbeatMs + agentReconnectGraceMs) is the slowest; the handler is short (--handler-ms), so an event that
// takes longer waited for something other than its agent.
//
//   eval "$(bash scripts/services.sh start)"    # TEST_POSTGRES_URL, TEST_REDIS_URL
//   npx tsx bench/rolling-restart.ts [--nodes 3] [--apps 4] [--agents 4] [--rate 8] [--handler-ms 1500]
//                                   [--settle-s 12] [--rounds 1] [--agent-timeout-s 60] [--kill] [--json FILE]
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { LIMITS } from '../generated/index.js';
import { AdminClient } from '../src/cli/admin-client.js';
import { BridgeError, connectApp, Connector, resolveConnectorConfig, type AppClient } from '../src/sdk/index.js';
import { createBenchDatabase } from './postgres.js';
import { ADMIN_TOKEN, freePort, provision, ROOT } from './processes.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '3' },
    apps: { type: 'string', default: '4' },
    agents: { type: 'string', default: '4' },
    rate: { type: 'string', default: '8' },
    'handler-ms': { type: 'string', default: '1500' },
    'settle-s': { type: 'string', default: '12' },
    rounds: { type: 'string', default: '1' },
    'agent-timeout-s': { type: 'string', default: '60' },
    kill: { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});
const whole = (name: string) => {
  const n = Number(values[name as keyof typeof values]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number, 1 or more`);
  return n;
};
const NODES = whole('nodes');
const RATE = whole('rate');
const HANDLER_MS = whole('handler-ms');
const SETTLE_MS = whole('settle-s') * 1000;
const AGENT_TIMEOUT_MS = whole('agent-timeout-s') * 1000;
const SIGNAL = values.kill ? 'SIGKILL' : 'SIGTERM';
/** The documented bound on an event whose agent's node left: its expiry found, then the agent's grace. */
const BOUND_MS = LIMITS.nodeExpiryMs + LIMITS.nodeHeartbeatMs + LIMITS.agentReconnectGraceMs;

const postgres = process.env.TEST_POSTGRES_URL;
const redisUrl = process.env.TEST_REDIS_URL;
if (!postgres || !redisUrl) {
  console.error('rolling-restart: needs PostgreSQL and Redis: eval "$(bash scripts/services.sh start)" first');
  process.exit(2);
}

interface Node {
  id: string;
  port: number;
  child?: ChildProcess;
  lines: string[];
}

async function startNode(node: Node, env: Record<string, string>): Promise<void> {
  const child = spawn(process.execPath, ['bin/bridge.js', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(node.port), HOST: '127.0.0.1', NODE_ID: node.id },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  node.child = child;
  const keep = (chunk: Buffer) => node.lines.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  for (const end = Date.now() + 30_000; ; await sleep(100)) {
    if (child.exitCode !== null)
      throw new Error(`${node.id} exited ${child.exitCode}:\n${node.lines.slice(-5).join('\n')}`);
    const ready = await fetch(`http://127.0.0.1:${node.port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return;
    if (Date.now() > end) throw new Error(`${node.id} not ready after 30 s:\n${node.lines.slice(-5).join('\n')}`);
  }
}

function stopNode(node: Node, signal: NodeJS.Signals): Promise<void> {
  const child = node.child!;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  return exited;
}

/** A round-robin TCP proxy: each connection to the next node that takes it (as nginx's upstream with max_fails). */
async function roundRobin(nodes: Node[]): Promise<{ port: number; close(): void }> {
  let next = 0;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    client.pause();
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    const attempt = (tries: number) => {
      if (tries === 0) return client.destroy();
      const node = nodes[next++ % nodes.length]!;
      const upstream = connect(node.port, '127.0.0.1');
      upstream.once('error', () => (upstream.readyState === 'opening' ? attempt(tries - 1) : client.destroy()));
      upstream.once('connect', () => {
        upstream.on('error', () => client.destroy());
        upstream.on('close', () => client.destroy());
        client.on('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    attempt(nodes.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close() {
      server.close();
      for (const socket of open) socket.destroy();
    },
  };
}

interface Sent {
  at: number;
  ended?: number;
  outcome?: string;
}

async function main(): Promise<void> {
  const db = await createBenchDatabase(postgres!);
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl!,
    REDIS_PREFIX: `bench${randomBytes(4).toString('hex')}`,
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_EVENTS_PER_SECOND: '0',
    AGENT_TIMEOUT_MS: String(AGENT_TIMEOUT_MS),
  };
  const nodes: Node[] = [];
  for (let i = 1; i <= NODES; i++) nodes.push({ id: `n${i}`, port: await freePort(), lines: [] });
  const proxy = await roundRobin(nodes);
  const apps: AppClient[] = [];
  let connector: Connector | undefined;
  const events: Sent[] = [];
  let sending: NodeJS.Timeout | undefined;
  try {
    for (const node of nodes) await startNode(node, env);
    const creds = await provision(
      new AdminClient(`http://127.0.0.1:${nodes[0]!.port}`, ADMIN_TOKEN),
      whole('agents'),
      whole('apps'),
    );
    const base = `ws://127.0.0.1:${proxy.port}/v1`;
    connector = new Connector(
      resolveConnectorConfig({ connection: { url: `${base}/ws/agent` }, agents: creds.agents }, { source: 'bench' }),
      {
        handler: async (event, ctx) => {
          for (let i = 0; i < 5 && !ctx.signal.aborted; i++) {
            ctx.token(`part ${i} `);
            await sleep(Math.round((HANDLER_MS / 5) * Math.random()));
          }
          ctx.reply('');
        },
        drainTimeoutMs: 0,
      },
    );
    await connector.start();
    for (const app of creds.apps) apps.push(await connectApp({ url: base, token: app.token }));

    let n = 0;
    sending = setInterval(() => {
      const app = apps[n % apps.length]!;
      const agent = creds.agents[n % creds.agents.length]!;
      n++;
      const sent: Sent = { at: Date.now() };
      events.push(sent);
      const handle = app.send({ agentId: agent.agent_id, threadId: `t${n % 16}`, payload: { n } });
      handle.reply.then(
        () => Object.assign(sent, { ended: Date.now(), outcome: 'reply' }),
        (err: Error) =>
          Object.assign(sent, { ended: Date.now(), outcome: err instanceof BridgeError ? err.code : err.name }),
      );
    }, 1000 / RATE);

    await sleep(SETTLE_MS);
    const stops: { node: string; at: number; restartedMs: number }[] = [];
    for (let round = 0; round < whole('rounds'); round++)
      for (const node of nodes) {
        const at = Date.now();
        await stopNode(node, SIGNAL);
        await startNode(node, env);
        stops.push({ node: node.id, at, restartedMs: Date.now() - at });
        console.log(`${SIGNAL} ${node.id}: back after ${Date.now() - at} ms`);
        await sleep(SETTLE_MS);
      }
    clearInterval(sending);
    sending = undefined;
    // Everything sent ends by the agent timeout at the latest (plus the grace, and a margin).
    for (
      const end = Date.now() + AGENT_TIMEOUT_MS + LIMITS.agentReconnectGraceMs + 5000;
      Date.now() < end;
      await sleep(500)
    )
      if (events.every((e) => e.ended !== undefined)) break;

    // An event "of" a stop: sent before the node is back and its settle time is over, answered after the stop.
    const tally = (list: Sent[]) => {
      const out: Record<string, number> = {};
      for (const e of list) out[e.outcome ?? 'never'] = (out[e.outcome ?? 'never'] ?? 0) + 1;
      return out;
    };
    const took = (e: Sent) => (e.ended ?? Number.POSITIVE_INFINITY) - e.at;
    const perStop = stops.map((stop, i) => {
      const until = stops[i + 1]?.at ?? Number.POSITIVE_INFINITY;
      const touched = events.filter((e) => e.at < until && (e.ended ?? Number.POSITIVE_INFINITY) > stop.at);
      const late = touched.filter((e) => took(e) > BOUND_MS);
      return {
        ...stop,
        events: touched.length,
        outcomes: tally(touched),
        slowest_ms: touched.length ? Math.max(...touched.map(took)) : 0,
        over_bound: late.length,
        over_bound_outcomes: tally(late),
        over_bound_ms: late.map(took),
      };
    });
    const result = {
      signal: SIGNAL,
      nodes: NODES,
      events: events.length,
      outcomes: tally(events),
      bound_ms: BOUND_MS,
      agent_timeout_ms: AGENT_TIMEOUT_MS,
      over_bound: events.filter((e) => took(e) > BOUND_MS).length,
      slowest_ms: Math.max(...events.map(took)),
      stops: perStop,
    };
    console.log(JSON.stringify(result, null, 2));
    if (values.json) writeFileSync(values.json, JSON.stringify(result, null, 2));
  } finally {
    if (sending) clearInterval(sending);
    await Promise.all(apps.map((a) => a.close()));
    await connector?.close();
    proxy.close();
    await Promise.all(nodes.map((node) => (node.child ? stopNode(node, 'SIGTERM') : Promise.resolve())));
    await db.drop();
  }
}

await main();
