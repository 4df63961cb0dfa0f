// The processes of a benchmark run: the bridge as in production, the bare relay, the Socket.IO relay, and load
// generators, each its own process so that no two share an event loop.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { AdminClient } from '../src/cli/admin-client.js';
import type { LoadConfig } from './load.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The checkout whose bridge startBridge runs (`node <dir>/bin/bridge.js serve`, from that folder): this one by
 * default, another with --bridge-dir, so that the same load measures two versions (it needs its own node_modules).
 * The generators, the admin client and the relay stay this checkout's.
 */
let bridgeDir = ROOT;
export function useBridgeDir(dir: string): void {
  bridgeDir = dir;
}
export const bridgeDirInUse = () => bridgeDir;
export const ADMIN_TOKEN = 'bench-admin-token-0123456789';

export interface Server {
  child: ChildProcess;
  port: number;
  url: string;
  pid: number;
  logs(): string;
  /** Bytes the process has written to stdout and stderr since it started (what a log collector would store). */
  logBytes(): number;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Keeps the last lines a child wrote, for the error message when it dies, and counts every byte it wrote. */
function tail(child: ChildProcess, name: string): { logs: () => string; logBytes: () => number } {
  const lines: string[] = [];
  let bytes = 0;
  const keep = (chunk: Buffer) => {
    bytes += chunk.length;
    for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(`[${name}] ${line}`);
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { logs: () => lines.join('\n'), logBytes: () => bytes };
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timeout = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timeout);
}

/** The soft limit on open files: the most connections one process can hold. */
export function openFilesLimit(): number {
  const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m ? Number(m[1]) : 1024;
}

/**
 * `node bin/bridge.js serve` (of the checkout useBridgeDir named) with a file SQLite database in `dir`, the rate limit
 * and the organizations' share of fragments off (the load generator's clients are one organization: the bench
 * measures what a node can carry, not F3's share of it), and warnings only.
 * `profileDir`: the bridge writes a V8 CPU profile there when it stops (--cpu-prof); `env`: more settings on top;
 * `inspect`: with the inspector on a port of its own (127.0.0.1 only), for collectGarbage().
 */
export async function startBridge(
  dir: string,
  profileDir?: string,
  env: Record<string, string> = {},
  inspect = false,
): Promise<Server & { admin: AdminClient; inspectorUrl?: string }> {
  const port = await freePort();
  const nodeArgs = [
    ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
    ...(inspect ? ['--inspect=127.0.0.1:0'] : []),
  ];
  const child = spawn(process.execPath, [...nodeArgs, join(bridgeDir, 'bin/bridge.js'), 'serve'], {
    cwd: bridgeDir,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'bridge.sqlite')}`,
      ADMIN_TOKEN,
      RATE_LIMIT_EVENTS_PER_SECOND: '0',
      FRAGMENTS_PER_ORG_PER_SECOND: '0',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { logs, logBytes } = tail(child, 'bridge');
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
  const admin = new AdminClient(`http://127.0.0.1:${port}`, ADMIN_TOKEN);
  // Node says where its inspector listens before the bridge starts; read now, while it is among the lines kept.
  const inspectorUrl = inspect ? /Debugger listening on (ws:\/\/\S+)/.exec(logs())?.[1] : undefined;
  if (inspect && !inspectorUrl) throw new Error(`the bridge did not say where its inspector listens:\n${logs()}`);
  return {
    child,
    port,
    url: `ws://127.0.0.1:${port}`,
    pid: child.pid!,
    logs,
    logBytes,
    admin,
    ...(inspectorUrl ? { inspectorUrl } : {}),
  };
}

/** bench/relay.ts; `batch`: with the bridge's write batching (--batch). */
export function startRelay(batch = false): Promise<Server> {
  return startListener('relay', 'bench/relay.ts', batch ? ['--batch'] : []);
}

/**
 * bench/socketio-relay.ts: the Socket.IO peer; with `redis`, one node of several over @socket.io/redis-adapter
 * (`key`: the prefix of its pub/sub channels, the same for every node of one run).
 */
export function startSocketIoRelay(redis?: { url: string; key: string }): Promise<Server> {
  const args = redis ? ['--redis-url', redis.url, '--redis-key', redis.key] : [];
  return startListener('socket.io relay', 'bench/socketio-relay.ts', args);
}

/** A server of this checkout's bench/ that prints `listening <port>` once it accepts connections. */
async function startListener(name: string, script: string, args: string[] = []): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, script), '--port', '0', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { logs, logBytes } = tail(child, name);
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the ${name} did not start in 20 s:\n${logs()}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => reject(new Error(`the ${name} exited with ${code}:\n${logs()}`)));
  });
  return { child, port, url: `ws://127.0.0.1:${port}`, pid: child.pid!, logs, logBytes };
}

export interface Credentials {
  agents: { agent_id: string; token: string }[];
  apps: { app_id: string; token: string }[];
}

/** One organization with `agents` agents and `apps` apps, made through the admin API. */
export async function provision(
  admin: AdminClient,
  agents: number,
  apps: number,
  name = 'Bench',
): Promise<Credentials & { org_id: string }> {
  const org = await admin.createOrganization(name);
  const out: Credentials & { org_id: string } = { org_id: org.org_id, agents: [], apps: [] };
  for (let j = 0; j < apps; j++) {
    const app = await admin.createApp(org.org_id, `Bench App ${j}`);
    out.apps.push({ app_id: app.app_id, token: app.token });
  }
  for (let i = 0; i < agents; i++) {
    const agent = await admin.createAgent(org.org_id, { name: `Bench Agent ${i}` });
    out.agents.push({ agent_id: agent.agent_id, token: agent.token });
  }
  return out;
}

/** Runs bench/load.ts with `config`; `onLine` sees each stdout line as it comes. Resolves with its RESULT. */
export function runGenerator<R>(config: LoadConfig, onLine?: (line: string) => void): Promise<R> {
  return startGenerator<R>(config, onLine).result;
}

/**
 * bench/load.ts with `config`, not awaited: `stop()` sends it SIGTERM, which a generator that runs until told
 * (the abuse scenario's canary) answers by printing its RESULT and exiting; `go()` sends SIGUSR2, which one that
 * was started ahead of its time (the abuse scenario's offender) waits for.
 */
export function startGenerator<R>(
  config: LoadConfig,
  onLine?: (line: string) => void,
): { result: Promise<R>; stop(): void; go(): void } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/load.ts')], {
    cwd: ROOT,
    env: { ...process.env, BENCH_LOAD_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let partial = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    partial += c.toString();
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines) onLine?.(line);
  });
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const result = (async () => {
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    const line = out.split('\n').find((l) => l.startsWith('RESULT '));
    if (code !== 0 || !line)
      throw new Error(`the load generator failed (exit ${code}):\n${err.slice(-4000)}${out.slice(-2000)}`);
    return JSON.parse(line.slice('RESULT '.length)) as R;
  })();
  const signal = (name: NodeJS.Signals) => void (child.exitCode === null && child.kill(name));
  return { result, stop: () => signal('SIGTERM'), go: () => signal('SIGUSR2') };
}

/** Stops the server (if it started), prints what it logged, and removes its temporary folder. */
export async function shutdown(server: Server | undefined, dir: string): Promise<void> {
  if (server) {
    await stop(server.child);
    const warnings = server.logs();
    if (warnings) console.error(warnings);
  }
  rmSync(dir, { recursive: true, force: true });
}

export interface Runtime {
  heap_used_kb: number | null;
  /** Seconds spent in garbage collection since start, by kind (minor, major, incremental, weakcb), and pauses. */
  gc_seconds: Record<string, number>;
  gc_count: Record<string, number>;
}

/** The bridge's heap and GC pauses from its own /metrics (prom-client's process metrics); null when unreachable. */
export async function runtimeOf(server: Server): Promise<Runtime | null> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    const heap = /^nodejs_heap_size_used_bytes (\d+)/m.exec(text);
    const gc_seconds: Record<string, number> = {};
    const gc_count: Record<string, number> = {};
    for (const m of text.matchAll(/^nodejs_gc_duration_seconds_(sum|count)\{kind="(\w+)"\} ([\d.e+-]+)/gm)) {
      (m[1] === 'sum' ? gc_seconds : gc_count)[m[2]!] = Number(m[3]);
    }
    return { heap_used_kb: heap ? Math.round(Number(heap[1]) / 1024) : null, gc_seconds, gc_count };
  } catch {
    return null;
  }
}

/**
 * A full garbage collection in a server started with the inspector on (startBridge's `inspect`), through the
 * DevTools protocol, so that a memory reading counts what is still held rather than what a collection would free.
 */
export async function collectGarbage(server: { inspectorUrl?: string }): Promise<void> {
  if (!server.inspectorUrl) throw new Error('collectGarbage: the server was not started with the inspector on');
  const ws = new WebSocket(server.inspectorUrl);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  for (let id = 1; id <= 2; id++) {
    const done = new Promise<void>((resolve) =>
      ws.on('message', (data) => (JSON.parse(data.toString()) as { id?: number }).id === id && resolve()),
    );
    ws.send(JSON.stringify({ id, method: 'HeapProfiler.collectGarbage' }));
    await done;
  }
  ws.close();
}

/** What changed between two readings: GC time and pauses during a run. */
export function runtimeDelta(before: Runtime | null, after: Runtime | null) {
  if (!before || !after) return null;
  const delta = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(Object.keys(b).map((k) => [k, Number(((b[k] ?? 0) - (a[k] ?? 0)).toFixed(4))]));
  return { gc_seconds: delta(before.gc_seconds, after.gc_seconds), gc_count: delta(before.gc_count, after.gc_count) };
}
