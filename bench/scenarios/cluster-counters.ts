// What the cluster scenario reads around each run: each node's counters from its /metrics (what it sent through
// Redis, the fragments it forwarded, what crossing nodes lost) and CPU time, the machine's CPU time and the
// Redis server's. Counters only: a run's figures are the difference of two readings.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { procCpuSeconds, round } from '../load/common.js';
import type { Server } from '../processes.js';

export interface NodeCounters {
  publishes: number;
  messages: number;
  dropped: number;
  tokens_forwarded: number;
  /** bridge_cluster_lost_total, every `what` added up (each is a message crossing nodes that went nowhere). */
  lost: number;
  cpu_s: number;
}

export interface Reading {
  at: number;
  nodes: NodeCounters[];
  /** The machine's CPU time, all cores, in seconds (/proc/stat): busy, and taken by the hypervisor (steal). */
  machine: { busy_s: number; steal_s: number } | null;
  /** The Redis server's CPU seconds (INFO cpu): the whole server, others' use of it included. */
  redis_cpu_s: number | null;
  /** PUBLISH commands the Redis server has run (INFO commandstats): the whole server, others' included. */
  redis_publishes: number | null;
  load1: number;
}

/** `name{labels}` -> value, for every sample of a Prometheus text page. */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^([a-zA-Z_:][\w:]*(?:\{[^}]*\})?) (\S+)$/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

export async function scrape(server: Server): Promise<Map<string, number>> {
  const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  if (!res.ok) throw new Error(`/metrics of the node on port ${server.port} answered ${res.status}`);
  return parseMetrics(await res.text());
}

async function nodeCounters(server: Server): Promise<NodeCounters> {
  const metrics = await scrape(server);
  const bus = (what: string) => metrics.get(`bridge_cluster_bus_total{what="${what}"}`) ?? 0;
  let lost = 0;
  for (const [key, value] of metrics) if (key.startsWith('bridge_cluster_lost_total{')) lost += value;
  return {
    publishes: bus('publishes'),
    messages: bus('messages'),
    dropped: bus('dropped'),
    tokens_forwarded: metrics.get('bridge_tokens_forwarded_total') ?? 0,
    lost,
    cpu_s: procCpuSeconds(server.pid) ?? NaN,
  };
}

function machineCpu(): Reading['machine'] {
  try {
    // user nice system idle iowait irq softirq steal (guest is counted in user already); USER_HZ is 100 on Linux.
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return { busy_s: (user + nice + system + irq + softirq) / 100, steal_s: steal / 100 };
  } catch {
    return null;
  }
}

/**
 * A server without the bridge's /metrics (the Socket.IO relay on several nodes): its CPU time, and none of the
 * bridge's counters (what its adapter sent through Redis is the server's PUBLISH count, Reading.redis_publishes).
 */
export async function cpuOnly(server: Server): Promise<NodeCounters> {
  const cpu_s = procCpuSeconds(server.pid) ?? NaN;
  return { publishes: 0, messages: 0, dropped: 0, tokens_forwarded: 0, lost: 0, cpu_s };
}

async function redisCpu(redis: Redis | undefined): Promise<Pick<Reading, 'redis_cpu_s' | 'redis_publishes'>> {
  if (!redis) return { redis_cpu_s: null, redis_publishes: null };
  try {
    const info = await redis.info('cpu');
    const at = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
    const calls = /^cmdstat_publish:calls=(\d+)/m.exec(await redis.info('commandstats'))?.[1];
    return { redis_cpu_s: at('used_cpu_sys') + at('used_cpu_user'), redis_publishes: Number(calls ?? 0) };
  } catch {
    return { redis_cpu_s: null, redis_publishes: null };
  }
}

/** `counters`: how each server's counters are read (the bridge's /metrics, or cpuOnly for the Socket.IO relay). */
export async function read(
  nodes: Server[],
  redis?: Redis,
  counters: (server: Server) => Promise<NodeCounters> = nodeCounters,
): Promise<Reading> {
  return {
    at: performance.now(),
    nodes: await Promise.all(nodes.map(counters)),
    machine: machineCpu(),
    ...(await redisCpu(redis)),
    load1: round(loadavg()[0]!, 2),
  };
}

/** What a run added: totals over the nodes, each node's CPU, and the machine's, in percent of one core. */
export function difference(before: Reading, after: Reading) {
  const seconds = (after.at - before.at) / 1000;
  const pct = (s: number | null) => (s === null || Number.isNaN(s) ? null : Math.round((s / seconds) * 100));
  const sum = (key: keyof NodeCounters) => after.nodes.reduce((a, n, i) => a + n[key] - before.nodes[i]![key], 0);
  const publishes = sum('publishes');
  const messages = sum('messages');
  const forwarded = sum('tokens_forwarded');
  const per = (x: number) => (forwarded ? round(x / forwarded, 4) : null);
  return {
    wall_s: round(seconds, 1),
    tokens_forwarded: forwarded,
    publishes,
    messages,
    dropped: sum('dropped'),
    lost: sum('lost'),
    publishes_per_fragment: per(publishes),
    messages_per_fragment: per(messages),
    node_cpu_pct: after.nodes.map((n, i) => pct(n.cpu_s - before.nodes[i]!.cpu_s)),
    node_cpu_s: round(sum('cpu_s')),
    redis_cpu_s:
      before.redis_cpu_s !== null && after.redis_cpu_s !== null ? round(after.redis_cpu_s - before.redis_cpu_s) : null,
    redis_publishes:
      before.redis_publishes !== null && after.redis_publishes !== null
        ? after.redis_publishes - before.redis_publishes
        : null,
    machine: {
      cores: cpus().length,
      load1_before: before.load1,
      load1_after: after.load1,
      busy_pct: before.machine && after.machine ? pct(after.machine.busy_s - before.machine.busy_s) : null,
      steal_pct: before.machine && after.machine ? pct(after.machine.steal_s - before.machine.steal_s) : null,
      redis_cpu_pct:
        before.redis_cpu_s !== null && after.redis_cpu_s !== null ? pct(after.redis_cpu_s - before.redis_cpu_s) : null,
    },
  };
}

export type Difference = ReturnType<typeof difference>;
