// What every scenario of the load generator shares: opening sockets, latency percentiles, reading a server's CPU
// time and memory from /proc (Linux).
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket, type ClientOptions } from 'ws';

/** What every timed scenario of the generator is told. */
export interface TimedConfig {
  /** The bridge, bench/relay.ts or bench/socketio-relay.ts. */
  target: 'bridge' | 'relay' | 'socketio';
  /** `ws://host:port`. */
  url: string;
  /** Closed loop: frames awaiting their answer per stream or socket. */
  window: number;
  /** Open loop: frames per second in all; closed loop when absent. */
  rate?: number;
  warmupS: number;
  durationS: number;
  payloadBytes: number;
  /** The server's pid, to read its CPU time from /proc. */
  serverPid?: number;
  agents?: { agent_id: string; token: string }[];
}

/** What every timed scenario reports. */
export interface TimedResult {
  target: TimedConfig['target'];
  rate: number | null;
  measured_s: number;
  latency_ms: Percentiles;
  errors: number;
  error_samples: string[];
  server_cpu_pct: number | null;
  generator_cpu_pct: number;
}

export interface Percentiles {
  p50: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  samples: number;
}

/** `options`: more of ws's client options, e.g. `localAddress` to connect from another loopback address. */
export function open(
  url: string,
  headers: Record<string, string> = {},
  options: ClientOptions = {},
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { ...options, headers, perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    ws.once('close', (code, reason) => reject(new Error(`closed ${code} ${reason.toString()} before open: ${url}`)));
  });
}

/** Latency samples in milliseconds, in a growable typed array (no per-sample allocation). */
export class Latencies {
  private values = new Float64Array(1 << 16);
  private n = 0;

  add(ms: number): void {
    if (this.n === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.n++] = ms;
  }

  summary(): Percentiles {
    const sorted = this.values.slice(0, this.n).sort();
    const at = (q: number) =>
      sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN;
    let sum = 0;
    for (const x of sorted) sum += x;
    return {
      p50: round(at(0.5)),
      p99: round(at(0.99)),
      p999: round(at(0.999)),
      max: round(sorted.length ? sorted[sorted.length - 1]! : NaN),
      mean: round(this.n ? sum / this.n : NaN),
      samples: this.n,
    };
  }
}

export const round = (x: number, digits = 3) => Number(x.toFixed(digits));

/** User + system CPU seconds of a process, from /proc/<pid>/stat; null where there is no /proc. */
export function procCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the line (11 and 12 after the command name), in clock ticks.
    return (Number(fields[11]) + Number(fields[12])) / 100; // CLK_TCK is 100 on Linux
  } catch {
    return null;
  }
}

/** Resident set size of a process in KiB, from /proc/<pid>/status; null where there is no /proc. */
export function procRssKb(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Errors counted, with the first few kept as examples. */
export class Errors {
  count = 0;
  readonly samples: string[] = [];

  add(who: string, text: string): void {
    this.count++;
    if (this.samples.length < 5) this.samples.push(`${who}: ${text.slice(0, 300)}`);
  }
}

/** CPU seconds (user + system) this process has used since it started. */
export function cpuSeconds(): number {
  const cpu = process.cpuUsage();
  return round((cpu.user + cpu.system) / 1e6);
}

/** CPU use of this process and of the server over a measured window, in percent of one core. */
export function cpuWindow(serverPid: number | undefined) {
  const cpu0 = process.cpuUsage();
  const server0 = serverPid ? procCpuSeconds(serverPid) : null;
  const t0 = performance.now();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const server1 = serverPid ? procCpuSeconds(serverPid) : null;
    return {
      measured_s: round(seconds),
      server_cpu_pct: server0 !== null && server1 !== null ? Math.round(((server1 - server0) / seconds) * 100) : null,
      generator_cpu_pct: Math.round(((cpu.user + cpu.system) / 1e6 / seconds) * 100),
    };
  };
}

const TYPE_PREFIX = '{"type":"';

/**
 * A frame's `type` without parsing all of it: the bridge writes `type` first, and a generator that parsed every
 * 1 KB payload echoed back to it would be measuring itself. Falls back to JSON.parse for any other shape.
 */
export function frameType(text: string): string {
  if (text.startsWith(TYPE_PREFIX)) {
    const end = text.indexOf('"', TYPE_PREFIX.length);
    if (end > 0) return text.slice(TYPE_PREFIX.length, end);
  }
  return String((JSON.parse(text) as { type?: unknown }).type);
}

/** The first `event_id` string in a frame. */
export function frameEventId(text: string): string | undefined {
  return /"event_id":"([^"]+)"/.exec(text)?.[1];
}

/** Open loop: calls `send(k, dueAt)` so that call k is due at t0 + k / rate, whatever the server does. Returns stop. */
export function pace(rate: number, send: (k: number, dueAt: number) => void): () => void {
  const t0 = performance.now();
  const perMs = rate / 1000;
  let sent = 0;
  const timer = setInterval(() => {
    const due = Math.floor((performance.now() - t0) * perMs);
    for (; sent < due; sent++) send(sent, t0 + sent / perMs);
  }, 1);
  return () => clearInterval(timer);
}

/** The warm-up, then the measured window with `measuring` on; the CPU use over that window. */
export async function measure(
  cfg: { warmupS: number; durationS: number; serverPid?: number },
  measuring: (on: boolean) => void,
) {
  await sleep(cfg.warmupS * 1000);
  const window = cpuWindow(cfg.serverPid);
  measuring(true);
  await sleep(cfg.durationS * 1000);
  measuring(false);
  return window();
}

/** Waits up to 10 s for what is in flight to arrive; returns how much never did. */
export async function drain(inFlight: () => number): Promise<number> {
  const deadline = performance.now() + 10_000;
  while (inFlight() > 0 && performance.now() < deadline) await sleep(5);
  return inFlight();
}

/** The part of a result every timed scenario shares. */
export function timedResult(
  cfg: TimedConfig,
  cpu: Awaited<ReturnType<typeof measure>>,
  latencies: Latencies,
  errors: Errors,
): TimedResult {
  return {
    target: cfg.target,
    rate: cfg.rate ?? null,
    measured_s: cpu.measured_s,
    latency_ms: latencies.summary(),
    errors: errors.count,
    error_samples: errors.samples,
    server_cpu_pct: cpu.server_cpu_pct,
    generator_cpu_pct: cpu.generator_cpu_pct,
  };
}
