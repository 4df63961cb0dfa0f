// Benchmark harness: the bridge against a bare WebSocket relay, same load generator, each in its own process.
//
//   npx tsx bench/run.ts [--quick] [--m 4] [--n 4] [--window 16] [--duration 30] [--warmup 2] [--payload-bytes 1000]
//                        [--only bridge|relay]
//
// Scenario 1 (token streaming agent -> app, closed loop): M agents each stream to N apps; each app sends one event per
// agent, the agent streams fragments of 1–5 words keeping K (--window) in flight per stream, the app counts them and
// measures each one's latency from the send time written into its text (bench/load.ts).
//   (a) the bridge as in production: `node bin/bridge.js serve`, a file SQLite database in a temporary folder,
//       ADMIN_TOKEN set, RATE_LIMIT_EVENTS_PER_SECOND=0, LOG_LEVEL=warn, apps and agents made through the admin API;
//   (b) bench/relay.ts, which forwards the same frames between paired sockets without parsing them.
// --quick: a 5-second measured window (after a 1-second warm-up). Prints a table; writes bench/results/<time>.json.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir, totalmem, release, platform, arch } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AdminClient } from '../src/cli/admin-client.js';
import type { LoadConfig, LoadResult } from './load.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    m: { type: 'string', default: '4' },
    n: { type: 'string', default: '4' },
    window: { type: 'string', default: '16' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    'payload-bytes': { type: 'string', default: '1000' },
    only: { type: 'string' },
  },
});
const M = Number(values.m);
const N = Number(values.n);
const K = Number(values.window);
const DURATION_S = Number(values.duration ?? (values.quick ? 5 : 30));
const WARMUP_S = Number(values.warmup ?? (values.quick ? 1 : 2));
const PAYLOAD_BYTES = Number(values['payload-bytes']);
for (const [name, v] of [['--m', M], ['--n', N], ['--window', K], ['--payload-bytes', PAYLOAD_BYTES]] as const) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a whole number, 1 or more`);
}
if (!(DURATION_S > 0) || !(WARMUP_S >= 0)) throw new Error('--duration must be > 0 and --warmup >= 0');
if (values.only && values.only !== 'bridge' && values.only !== 'relay') throw new Error('--only takes bridge or relay');

const ADMIN_TOKEN = 'bench-admin-token-0123456789';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Keeps the last lines a child wrote, for the error message when it dies. */
function tail(child: ChildProcess, name: string): () => string {
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(`[${name}] ${line}`);
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => lines.join('\n');
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timeout = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timeout);
}

async function startBridge(dir: string): Promise<{ child: ChildProcess; port: number; logs: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'bin/bridge.js'), 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'bridge.sqlite')}`,
      ADMIN_TOKEN,
      RATE_LIMIT_EVENTS_PER_SECOND: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs = tail(child, 'bridge');
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the bridge exited with ${child.exitCode}:\n${logs()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the bridge was not ready after 30 s:\n${logs()}`);
    await sleep(100);
  }
  return { child, port, logs };
}

async function startRelay(): Promise<{ child: ChildProcess; port: number; logs: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/relay.ts'), '--port', '0'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs = tail(child, 'relay');
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the relay did not start in 20 s:\n${logs()}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`the relay exited with ${code}:\n${logs()}`)));
  });
  return { child, port, logs };
}

async function runGenerator(config: LoadConfig): Promise<LoadResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/load.ts')], {
    cwd: ROOT,
    env: { ...process.env, BENCH_LOAD_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  if (code !== 0 || !line) throw new Error(`the load generator failed (exit ${code}):\n${err}${out}`);
  return JSON.parse(line.slice('RESULT '.length)) as LoadResult;
}

const base = { m: M, n: N, window: K, warmupS: WARMUP_S, durationS: DURATION_S, payloadBytes: PAYLOAD_BYTES };

async function benchRelay(): Promise<LoadResult> {
  const relay = await startRelay();
  try {
    console.error(`relay on port ${relay.port} (pid ${relay.child.pid}); generator running ${WARMUP_S + DURATION_S} s...`);
    return await runGenerator({ ...base, target: 'relay', url: `ws://127.0.0.1:${relay.port}`, serverPid: relay.child.pid! });
  } finally {
    await stop(relay.child);
  }
}

async function benchBridge(): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-bridge-'));
  const bridge = await startBridge(dir);
  try {
    const admin = new AdminClient(`http://127.0.0.1:${bridge.port}`, ADMIN_TOKEN);
    const org = await admin.createOrganization('Bench');
    const apps = [];
    for (let j = 0; j < N; j++) {
      const app = await admin.createApp(org.org_id, `Bench App ${j}`);
      apps.push({ app_id: app.app_id, token: app.token });
    }
    const agents = [];
    for (let i = 0; i < M; i++) {
      const agent = await admin.createAgent(org.org_id, { name: `Bench Agent ${i}` });
      agents.push({ agent_id: agent.agent_id, token: agent.token });
    }
    console.error(`bridge on port ${bridge.port} (pid ${bridge.child.pid}); generator running ${WARMUP_S + DURATION_S} s...`);
    const result = await runGenerator({ ...base, target: 'bridge', url: `ws://127.0.0.1:${bridge.port}`, serverPid: bridge.child.pid!, agents, apps });
    if (bridge.child.exitCode !== null) throw new Error(`the bridge exited during the run:\n${bridge.logs()}`);
    return result;
  } finally {
    await stop(bridge.child);
    const warnings = bridge.logs();
    if (warnings) console.error(warnings);
    rmSync(dir, { recursive: true, force: true });
  }
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

const startedAt = new Date();
const relay = values.only === 'bridge' ? undefined : await benchRelay();
const bridge = values.only === 'relay' ? undefined : await benchBridge();
const ratio = bridge && relay ? bridge.fragments_per_s / relay.fragments_per_s : null;

const machine = {
  cpus: cpus().length,
  cpu_model: cpus()[0]?.model ?? 'unknown',
  memory_gb: Number((totalmem() / 2 ** 30).toFixed(1)),
  node: process.version,
  platform: `${platform()} ${release()} ${arch()}`,
  git_commit: gitCommit(),
};
const result = {
  bench: 'relay-vs-bridge',
  scenario: 'token-streaming-closed-loop',
  at: startedAt.toISOString(),
  quick: values.quick,
  params: { m: M, n: N, streams: M * N, window: K, duration_s: DURATION_S, warmup_s: WARMUP_S, payload_bytes: PAYLOAD_BYTES },
  machine,
  relay: relay ?? null,
  bridge: bridge ?? null,
  ratio_bridge_over_relay: ratio === null ? null : Number(ratio.toFixed(3)),
};

const cell = (r: LoadResult | undefined, f: (r: LoadResult) => string | number) => (r ? String(f(r)) : '-');
const rows: [string, string, string][] = [
  ['fragments/s delivered', cell(bridge, (r) => r.fragments_per_s), cell(relay, (r) => r.fragments_per_s)],
  ['fragments counted', cell(bridge, (r) => r.fragments), cell(relay, (r) => r.fragments)],
  ['latency p50 (ms)', cell(bridge, (r) => r.latency_ms.p50), cell(relay, (r) => r.latency_ms.p50)],
  ['latency p99 (ms)', cell(bridge, (r) => r.latency_ms.p99), cell(relay, (r) => r.latency_ms.p99)],
  ['latency p99.9 (ms)', cell(bridge, (r) => r.latency_ms.p999), cell(relay, (r) => r.latency_ms.p999)],
  ['latency max (ms)', cell(bridge, (r) => r.latency_ms.max), cell(relay, (r) => r.latency_ms.max)],
  ['frame bytes at the app (mean)', cell(bridge, (r) => r.fragment_bytes_mean), cell(relay, (r) => r.fragment_bytes_mean)],
  ['server CPU %', cell(bridge, (r) => r.server_cpu_pct ?? '?'), cell(relay, (r) => r.server_cpu_pct ?? '?')],
  ['generator CPU %', cell(bridge, (r) => r.generator_cpu_pct), cell(relay, (r) => r.generator_cpu_pct)],
  ['errors', cell(bridge, (r) => r.errors), cell(relay, (r) => r.errors)],
];
console.log(
  `\nScenario 1: token streaming agent -> app, closed loop. ${M} agents x ${N} apps = ${M * N} streams, window ${K}, ` +
    `${DURATION_S} s measured after ${WARMUP_S} s warm-up; ${machine.cpus} CPUs, Node ${machine.node}\n`,
);
const w0 = Math.max(...rows.map((r) => r[0].length));
const w1 = Math.max(6, ...rows.map((r) => r[1].length));
const w2 = Math.max(12, ...rows.map((r) => r[2].length));
console.log(`${''.padEnd(w0)}  ${'bridge'.padStart(w1)}  ${'relay (base)'.padStart(w2)}`);
for (const [k, b, r] of rows) console.log(`${k.padEnd(w0)}  ${b.padStart(w1)}  ${r.padStart(w2)}`);
if (ratio !== null) console.log(`\nbridge / baseline throughput: ${ratio.toFixed(3)}`);
for (const r of [bridge, relay]) for (const e of r?.error_samples ?? []) console.log(`  ${r!.target} error: ${e}`);

const resultsDir = join(ROOT, 'bench/results');
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
console.log(`\nwritten: ${file}`);
if ((bridge?.errors ?? 0) + (relay?.errors ?? 0) > 0) process.exitCode = 1;
