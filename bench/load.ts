// The load generator of bench/run.ts, in its own process (never inside a server's). Scenario 1, token streaming
// agent -> app, closed loop: M agents each stream to N apps (M x N streams). Each app sends one event per agent;
// the agent answers it with `token` fragments of 1–5 words, keeping a fixed window of K fragments in flight per stream:
// each fragment the app receives lets the agent send one more. Every fragment's text starts with the time it was
// sent (performance.now(), same process), so the app measures its latency when it arrives.
//
//   node --import tsx bench/load.ts --config '<json: LoadConfig>'   (or the JSON in BENCH_LOAD_CONFIG)
//
// Targets: `bridge` (the real bridge: app and agent tokens, provisioned by run.ts) or `relay` (bench/relay.ts:
// one app and one agent socket per stream, paired by key; the app's event and the agent's fragments travel as the
// same JSON frames, forwarded verbatim). Progress on stderr; the result as the last stdout line: `RESULT {json}`.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';

export interface LoadConfig {
  target: 'bridge' | 'relay';
  /** bridge: `ws://host:port` (endpoints /v1/ws/app, /v1/ws/agent); relay: `ws://host:port` (/app, /agent). */
  url: string;
  m: number;
  n: number;
  window: number;
  warmupS: number;
  durationS: number;
  /** Bytes of the event's payload text. */
  payloadBytes: number;
  /** The server's pid, to read its CPU time from /proc (Linux). */
  serverPid?: number;
  /** bridge only. */
  agents?: { agent_id: string; token: string }[];
  apps?: { app_id: string; token: string }[];
}

export interface LoadResult {
  target: LoadConfig['target'];
  streams: number;
  measured_s: number;
  fragments: number;
  fragments_per_s: number;
  fragment_bytes_mean: number;
  latency_ms: { p50: number; p99: number; p999: number; max: number; mean: number; samples: number };
  errors: number;
  error_samples: string[];
  replies: number;
  server_cpu_pct: number | null;
  generator_cpu_pct: number;
  setup_ms: number;
}

const WORDS = 'the a prime number has exactly two divisors one and itself so seven is prime but nine is not because three divides it evenly'.split(' ');

interface Stream {
  agentIdx: number;
  appIdx: number;
  threadId: string;
  eventId?: string;
  agentWs: WebSocket;
  appWs: WebSocket;
  inFlight: number;
  started: boolean;
}

function open(url: string, headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('close', (code, reason) => reject(new Error(`closed ${code} ${reason.toString()} before open: ${url}`)));
  });
}

function procCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the line (11 and 12 after the command name), in clock ticks.
    return (Number(fields[11]) + Number(fields[12])) / 100; // CLK_TCK is 100 on Linux
  } catch {
    return null;
  }
}

const quantile = (sorted: Float64Array, q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN);
const round = (x: number, d = 3) => Number(x.toFixed(d));

export async function runLoad(cfg: LoadConfig): Promise<LoadResult> {
  const setupStart = performance.now();
  const payloadText = 'x'.repeat(cfg.payloadBytes);
  let stopping = false;
  let measuring = false;
  let fragments = 0;
  let fragmentBytes = 0;
  let latencies = new Float64Array(1 << 20);
  let nLat = 0;
  let errors = 0;
  const errorSamples: string[] = [];
  let replies = 0;
  let wordSeed = 1;

  const streams: Stream[] = [];
  const fragmentFor = (s: Stream): string => {
    const count = 1 + (wordSeed++ % 5);
    let text = performance.now().toFixed(3);
    for (let i = 0; i < count; i++) text += ` ${WORDS[(wordSeed * 7 + i * 13) % WORDS.length]}`;
    return JSON.stringify({ type: 'token', event_id: s.eventId, token: text });
  };
  // Sends of one event-loop turn leave corked, so one TCP read's worth of refills goes out in a few writes instead
  // of one write per frame (the generator must not be the bottleneck of a 2-core machine).
  const corked = new Set<Socket>();
  const uncorkAll = () => {
    for (const sock of corked) sock.uncork();
    corked.clear();
  };
  const sendFragment = (s: Stream) => {
    s.inFlight++;
    const sock = (s.agentWs as unknown as { _socket: Socket })._socket;
    if (!corked.has(sock)) {
      if (corked.size === 0) setImmediate(uncorkAll);
      corked.add(sock);
      sock.cork();
    }
    s.agentWs.send(fragmentFor(s));
  };
  const startStream = (s: Stream) => {
    if (s.started) return;
    s.started = true;
    for (let i = 0; i < cfg.window; i++) sendFragment(s);
  };
  const onError = (who: string, text: string) => {
    errors++;
    if (errorSamples.length < 5) errorSamples.push(`${who}: ${text.slice(0, 300)}`);
  };
  const onToken = (s: Stream, token: string, frameBytes: number) => {
    const now = performance.now();
    s.inFlight--;
    if (measuring) {
      fragments++;
      fragmentBytes += frameBytes;
      if (nLat === latencies.length) {
        const bigger = new Float64Array(latencies.length * 2);
        bigger.set(latencies);
        latencies = bigger;
      }
      latencies[nLat++] = now - Number(token.slice(0, token.indexOf(' ')));
    }
    if (!stopping) sendFragment(s);
  };
  const eventFrame = (s: Stream, agentId: string) =>
    JSON.stringify({ type: 'event', agent_id: agentId, thread_id: s.threadId, payload: { text: payloadText } });

  if (cfg.target === 'bridge') {
    const agents = cfg.agents ?? [];
    const apps = cfg.apps ?? [];
    if (agents.length !== cfg.m || apps.length !== cfg.n) throw new Error('bridge target: need m agents and n apps');
    const agentSockets = await Promise.all(agents.map((a) => open(`${cfg.url}/v1/ws/agent`, { authorization: `Bearer ${a.token}` })));
    const appSockets = await Promise.all(apps.map((a) => open(`${cfg.url}/v1/ws/app`, { authorization: `Bearer ${a.token}` })));
    const byThread = new Map<string, Stream>();
    const byAppAgent = new Map<string, Stream>(); // `${appIdx}/${agent_id}`
    for (let i = 0; i < cfg.m; i++) {
      for (let j = 0; j < cfg.n; j++) {
        const s: Stream = { agentIdx: i, appIdx: j, threadId: `bench-${i}-${j}`, agentWs: agentSockets[i]!, appWs: appSockets[j]!, inFlight: 0, started: false };
        streams.push(s);
        byThread.set(s.threadId, s);
        byAppAgent.set(`${j}/${agents[i]!.agent_id}`, s);
      }
    }
    agentSockets.forEach((ws, i) => {
      ws.on('message', (data) => {
        const text = data.toString();
        const msg = JSON.parse(text) as { type: string; event_id?: string; thread_id?: string };
        if (msg.type === 'event') {
          const s = byThread.get(msg.thread_id!);
          if (!s) return onError(`agent ${i}`, `unexpected event ${text.slice(0, 200)}`);
          s.eventId = msg.event_id;
          startStream(s);
        } else if (msg.type === 'error') onError(`agent ${i}`, text);
      });
    });
    appSockets.forEach((ws, j) => {
      ws.on('message', (data) => {
        const text = data.toString();
        const msg = JSON.parse(text) as { type: string; agent_id?: string; token?: string };
        if (msg.type === 'token') {
          const s = byAppAgent.get(`${j}/${msg.agent_id}`);
          if (s) onToken(s, msg.token!, text.length);
          else onError(`app ${j}`, `token of unknown stream ${text.slice(0, 200)}`);
        } else if (msg.type === 'reply') replies++;
        else if (msg.type === 'error') onError(`app ${j}`, text);
      });
    });
    for (const s of streams) s.appWs.send(eventFrame(s, agents[s.agentIdx]!.agent_id));
  } else {
    for (let i = 0; i < cfg.m; i++) {
      for (let j = 0; j < cfg.n; j++) {
        const key = `s-${i}-${j}`;
        const appWs = await open(`${cfg.url}/app?key=${key}`);
        const agentWs = await open(`${cfg.url}/agent?key=${key}`);
        // An id of the bridge's shape (a 26-character ULID).
        const s: Stream = { agentIdx: i, appIdx: j, threadId: `bench-${i}-${j}`, eventId: `01BENCH${String(i * cfg.n + j).padStart(19, '0')}`, agentWs, appWs, inFlight: 0, started: false };
        streams.push(s);
        agentWs.on('message', (data) => {
          const text = data.toString();
          const msg = JSON.parse(text) as { type: string };
          if (msg.type === 'event') startStream(s);
        });
        appWs.on('message', (data) => {
          const text = data.toString();
          const msg = JSON.parse(text) as { type: string; token?: string };
          if (msg.type === 'token') onToken(s, msg.token!, text.length);
          else onError(`app ${key}`, text);
        });
      }
    }
    for (const s of streams) s.appWs.send(eventFrame(s, `agent-${s.agentIdx}`));
  }
  for (const s of streams) {
    s.appWs.on('close', (code, reason) => !stopping && onError('app socket', `closed ${code} ${reason.toString()}`));
    s.agentWs.on('close', (code, reason) => !stopping && onError('agent socket', `closed ${code} ${reason.toString()}`));
  }

  // Every stream under way, then the warm-up, then the measured window.
  const startDeadline = performance.now() + 10_000;
  while (!streams.every((s) => s.started)) {
    if (performance.now() > startDeadline) throw new Error(`streams not started after 10 s (errors: ${errorSamples.join(' | ')})`);
    await sleep(5);
  }
  const setupMs = performance.now() - setupStart;
  await sleep(cfg.warmupS * 1000);
  const cpu0 = process.cpuUsage();
  const server0 = cfg.serverPid ? procCpuSeconds(cfg.serverPid) : null;
  const t0 = performance.now();
  measuring = true;
  await sleep(cfg.durationS * 1000);
  measuring = false;
  const t1 = performance.now();
  const cpu1 = process.cpuUsage(cpu0);
  const server1 = cfg.serverPid ? procCpuSeconds(cfg.serverPid) : null;
  stopping = true;

  // Drain the fragments in flight, then (bridge) end each event with a reply.
  const drainDeadline = performance.now() + 5000;
  while (streams.some((s) => s.inFlight > 0) && performance.now() < drainDeadline) await sleep(5);
  const undrained = streams.reduce((a, s) => a + s.inFlight, 0);
  if (undrained) onError('drain', `${undrained} fragments never arrived`);
  if (cfg.target === 'bridge') {
    for (const s of streams) s.agentWs.send(JSON.stringify({ type: 'reply', event_id: s.eventId, content: 'done', done: true }));
    const replyDeadline = performance.now() + 5000;
    while (replies < streams.length && performance.now() < replyDeadline) await sleep(5);
    if (replies < streams.length) onError('reply', `${streams.length - replies} replies missing`);
  }
  for (const s of streams) {
    s.appWs.close();
    s.agentWs.close();
  }

  const measuredS = (t1 - t0) / 1000;
  const sorted = latencies.slice(0, nLat).sort();
  let sum = 0;
  for (const x of sorted) sum += x;
  return {
    target: cfg.target,
    streams: streams.length,
    measured_s: round(measuredS),
    fragments,
    fragments_per_s: Math.round(fragments / measuredS),
    fragment_bytes_mean: fragments ? Math.round(fragmentBytes / fragments) : 0,
    latency_ms: {
      p50: round(quantile(sorted, 0.5)),
      p99: round(quantile(sorted, 0.99)),
      p999: round(quantile(sorted, 0.999)),
      max: round(sorted.length ? sorted[sorted.length - 1]! : NaN),
      mean: round(nLat ? sum / nLat : NaN),
      samples: nLat,
    },
    errors,
    error_samples: errorSamples,
    replies,
    server_cpu_pct: server0 !== null && server1 !== null ? Math.round(((server1 - server0) / measuredS) * 100) : null,
    generator_cpu_pct: Math.round(((cpu1.user + cpu1.system) / 1e6 / measuredS) * 100),
    setup_ms: Math.round(setupMs),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { config: { type: 'string' } } });
  const config = values.config ?? process.env.BENCH_LOAD_CONFIG;
  if (!config) throw new Error('--config <json> (or BENCH_LOAD_CONFIG) is required');
  const result = await runLoad(JSON.parse(config) as LoadConfig);
  console.log(`RESULT ${JSON.stringify(result)}`);
  process.exit(0);
}
