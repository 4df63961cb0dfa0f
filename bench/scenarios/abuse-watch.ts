// Watching the bridge from outside during an attack: its memory (from /proc, which answers however busy the bridge
// is, and from its /metrics, which may not), its counters, the rows its SQLite file holds, and its sessions listing.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import sqlite3 from 'sqlite3';
import type { AdminClient } from '../../src/cli/admin-client.js';
import { procRssKb } from '../load/common.js';
import type { Server } from '../processes.js';

/** Every `bridge_*` and memory series of a /metrics text (histogram buckets left out), `name{labels}` -> value. */
export function parseMetrics(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(
    /^((?:bridge_|nodejs_heap_size_used_bytes|process_resident_memory_bytes)[^\s{]*(?:\{[^}]*\})?) ([\d.e+-]+)$/gm,
  )) {
    if (!m[1]!.includes('_bucket')) out[m[1]!] = Number(m[2]);
  }
  return out;
}

export async function metricsOf(server: Server, timeoutMs = 5000): Promise<Record<string, number> | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${server.port}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok ? parseMetrics(await res.text()) : null;
  } catch {
    return null;
  }
}

/** The sum of a metric's series (all label values), or null when the bridge has no such metric. */
export function total(metrics: Record<string, number> | null, name: string): number | null {
  if (!metrics) return null;
  const series = Object.entries(metrics).filter(([k]) => k === name || k.startsWith(`${name}{`));
  return series.length ? series.reduce((n, [, v]) => n + v, 0) : null;
}

/** The series of one metric by label value, e.g. {RATE_LIMIT_EXCEEDED: 97000}. */
export function byLabel(metrics: Record<string, number> | null, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(metrics ?? {})) {
    const m = new RegExp(`^${name}\\{\\w+="([^"]*)"\\}$`).exec(k);
    if (m && v) out[m[1]!] = v;
  }
  return out;
}

/** The kernel's high-water mark of the process's RSS (VmHWM): the peak, even one between two samples. */
export function peakRssKb(pid: number): number | null {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export interface Watch {
  max_rss_kb: number | null;
  max_heap_used_kb: number | null;
  max_app_connections: number | null;
  /** The highest value of every series /metrics gave while watched (gauges' peaks; counters' last). */
  max_metrics: Record<string, number>;
  samples: number;
  /** /metrics scrapes that got no answer within 2 s (their heap was not seen). */
  metrics_unanswered: number;
  metrics_answered: number;
}

/** Samples RSS every 200 ms and /metrics once a second (one request at a time) until stopped. */
export function watch(server: Server): { stop(): Promise<Watch> } {
  const w: Watch = {
    max_rss_kb: null,
    max_heap_used_kb: null,
    max_app_connections: null,
    max_metrics: {},
    samples: 0,
    metrics_unanswered: 0,
    metrics_answered: 0,
  };
  const max = (a: number | null, b: number | null) => (b === null ? a : a === null ? b : Math.max(a, b));
  let running = true;
  const rssLoop = (async () => {
    while (running) {
      w.max_rss_kb = max(w.max_rss_kb, procRssKb(server.pid));
      w.samples++;
      await sleep(200);
    }
  })();
  const metricsLoop = (async () => {
    while (running) {
      const m = await metricsOf(server, 2000);
      if (!m) w.metrics_unanswered++;
      else {
        w.metrics_answered++;
        for (const [k, v] of Object.entries(m)) w.max_metrics[k] = Math.max(w.max_metrics[k] ?? -Infinity, v);
      }
      const heap = m?.nodejs_heap_size_used_bytes;
      w.max_heap_used_kb = max(w.max_heap_used_kb, heap === undefined ? null : Math.round(heap / 1024));
      w.max_app_connections = max(w.max_app_connections, m?.['bridge_connections{kind="app"}'] ?? null);
      await sleep(1000);
    }
  })();
  return {
    async stop() {
      running = false;
      await Promise.all([rssLoop, metricsLoop]);
      return w;
    },
  };
}

/**
 * Rows the SQLite file holds: the events table (all, and the app's) and the app's sessions. Read while the bridge
 * runs (WAL lets a reader in), after the scenario made it flush.
 */
export async function rowsOf(
  file: string,
  appId: string,
): Promise<{ events: number; events_of_app: number; sessions_of_app: number } | null> {
  const db = await new Promise<sqlite3.Database | null>((resolve) => {
    const d: sqlite3.Database = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (err) => resolve(err ? null : d));
  });
  if (!db) return null;
  const count = (sql: string, params: unknown[]) =>
    new Promise<number>((resolve, reject) =>
      db.get<{ n: number }>(sql, params, (err, row) => (err ? reject(err) : resolve(row!.n))),
    );
  try {
    return {
      events: await count('SELECT count(*) AS n FROM events', []),
      events_of_app: await count('SELECT count(*) AS n FROM events WHERE app_id = ?', [appId]),
      sessions_of_app: await count('SELECT count(*) AS n FROM sessions WHERE app_id = ?', [appId]),
    };
  } catch {
    return null;
  } finally {
    db.close();
  }
}

/**
 * The app's live sessions counted through GET /admin/v1/sessions, 500 a page, for at most `budgetMs`: how many,
 * whether the listing ended, and how long one page took (the first, and the slowest).
 */
export async function listSessions(admin: AdminClient, appId: string, budgetMs: number) {
  const t0 = performance.now();
  let count = 0;
  let pages = 0;
  let firstPageMs = 0;
  let slowestPageMs = 0;
  let after: string | null = null;
  do {
    const t = performance.now();
    const page = await admin.sessions({ app_id: appId, limit: '500', ...(after ? { after } : {}) });
    const ms = performance.now() - t;
    if (pages === 0) firstPageMs = ms;
    slowestPageMs = Math.max(slowestPageMs, ms);
    pages++;
    count += page.sessions.length;
    after = page.next_after;
  } while (after !== null && performance.now() - t0 < budgetMs);
  const round1 = (x: number) => Number(x.toFixed(1));
  return {
    count,
    complete: after === null,
    pages,
    seconds: round1((performance.now() - t0) / 1000),
    first_page_ms: round1(firstPageMs),
    slowest_page_ms: round1(slowestPageMs),
  };
}
