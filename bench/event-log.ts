// How many events per second the event log sustains on this machine: a WriteBehind on a file SQLite database (WAL,
// opened as the server opens it), fed N events at full speed, each as insertEvent (accepted) and, a little later,
// updateEvent (replied), as the bridge does, with the default group-commit window.
//
//   npx tsx bench/event-log.ts [--events N] [--in-flight K] [--chunk C]
//
// --in-flight: how many events are between their insert and their update (default 100); --chunk: events fed between
// two turns of the event loop (default 500), so the commit timer and SQLite's callbacks run as they would in the server.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import type { Logger } from '../src/shared/logger.js';
import { openDatabase } from '../src/store/database.js';
import { WriteBehind, type EventRow } from '../src/store/write-behind.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '200000' },
    'in-flight': { type: 'string', default: '100' },
    chunk: { type: 'string', default: '500' },
  },
});
const N = Number(values.events);
const IN_FLIGHT = Number(values['in-flight']);
const CHUNK = Number(values.chunk);
for (const [name, v] of [
  ['--events', N],
  ['--in-flight', IN_FLIGHT],
  ['--chunk', CHUNK],
] as const) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a whole number, 1 or more`);
}

const { eventLogFlushMs: flushMs, eventLogQueueMaxRows: maxRows } = loadConfig({}); // the defaults (EVENT_LOG_* unset)

const quantile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-event-log-'));
  const file = join(dir, 'bench.sqlite');
  const db = await openDatabase(`sqlite:${file}`);
  try {
    const [{ journal_mode: journal }] = (await db.raw('PRAGMA journal_mode')) as { journal_mode: string }[] as [
      { journal_mode: string },
    ];
    let errors = 0;
    const log: Logger = {
      debug() {},
      info() {},
      warn: (fields, message) => console.error('warn:', message, fields),
      error: (fields, message) => {
        errors++;
        console.error('error:', message, fields);
      },
    };
    // Group commits, timed where they happen (one transaction each).
    const commits: { ms: number; rows: number }[] = [];
    const writer = new WriteBehind(db, log, { flushMs, maxRows, onCommit: (rows, ms) => commits.push({ rows, ms }) });

    // And flush() from the call to its promise resolving (this includes waiting behind earlier commits).
    const flushLatency: number[] = [];
    const flush = writer.flush.bind(writer);
    writer.flush = () => {
      const t = performance.now();
      const done = flush();
      done.then(
        () => flushLatency.push(performance.now() - t),
        () => {},
      );
      return done;
    };

    const id = (i: number) => `01BENCH${i.toString(36).padStart(19, '0')}`;
    const row = (i: number, now: number): EventRow => ({
      event_id: id(i),
      app_id: 'bench-app',
      agent_id: 'bench-agent',
      thread_id: `thread-${i % 100}`,
      session_key: `svc:bench-agent:bench-app:thread-${i % 100}`,
      status: 'delivered',
      outcome: 'pending',
      code: null,
      payload_bytes: 120,
      tokens_used: null,
      received_at: now,
      completed_at: null,
      latency_ms: null,
    });
    const replied = (i: number, now: number) =>
      writer.updateEvent(id(i), { outcome: 'replied', tokens_used: 12, completed_at: now, latency_ms: 3 });

    let maxPending = 0;
    const started = performance.now();
    for (let i = 0; i < N; i++) {
      const now = Date.now();
      writer.insertEvent(row(i, now));
      if (i >= IN_FLIGHT) replied(i - IN_FLIGHT, now);
      if (i % CHUNK === CHUNK - 1) {
        maxPending = Math.max(maxPending, writer.pending);
        await nextTurn();
      }
    }
    for (let i = Math.max(0, N - IN_FLIGHT); i < N; i++) replied(i, Date.now());
    const fed = performance.now();
    await writer.flush();
    const ended = performance.now();

    const [{ n: rowsInTable }] = (await db('events').count({ n: '*' })) as [{ n: number }];
    const [{ n: repliedRows }] = (await db('events').where({ outcome: 'replied' }).count({ n: '*' })) as [
      { n: number },
    ];
    const wallS = (ended - started) / 1000;
    const durations = commits.map((c) => c.ms).sort((a, b) => a - b);
    const flushes = flushLatency.sort((a, b) => a - b);
    const rowsPerCommit = commits.map((c) => c.rows);
    const result = {
      bench: 'event-log',
      events: N,
      in_flight: IN_FLIGHT,
      chunk: CHUNK,
      flush_ms: flushMs,
      journal_mode: journal,
      wall_s: Number(wallS.toFixed(3)),
      feed_s: Number(((fed - started) / 1000).toFixed(3)),
      events_per_s: Math.round(N / wallS),
      rows_in_table: Number(rowsInTable),
      replied_rows: Number(repliedRows),
      commits: commits.length,
      rows_per_commit_mean: Math.round(rowsPerCommit.reduce((a, b) => a + b, 0) / Math.max(1, commits.length)),
      rows_per_commit_max: Math.max(0, ...rowsPerCommit),
      commit_ms_p50: Number(quantile(durations, 0.5).toFixed(2)),
      commit_ms_p99: Number(quantile(durations, 0.99).toFixed(2)),
      commit_ms_max: Number((durations.at(-1) ?? NaN).toFixed(2)),
      flush_latency_ms_p50: Number(quantile(flushes, 0.5).toFixed(2)),
      flush_latency_ms_p99: Number(quantile(flushes, 0.99).toFixed(2)),
      max_pending_rows: maxPending,
      db_bytes: statSync(file).size + (statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0),
      errors,
    };

    const table: [string, string | number][] = [
      ['events (insert + update each)', N],
      ['group-commit window (ms)', flushMs],
      ['journal mode', journal],
      ['wall time, first insert to last flush (s)', result.wall_s],
      ['events/s committed', result.events_per_s],
      ['rows in table', `${result.rows_in_table}${result.rows_in_table === N ? ' (= N)' : ` (!= N ${N})`}`],
      ['rows replied', result.replied_rows],
      ['group commits', result.commits],
      ['rows per commit, mean / max', `${result.rows_per_commit_mean} / ${result.rows_per_commit_max}`],
      [
        'commit duration p50 / p99 / max (ms)',
        `${result.commit_ms_p50} / ${result.commit_ms_p99} / ${result.commit_ms_max}`,
      ],
      ['flush() to resolved p50 / p99 (ms)', `${result.flush_latency_ms_p50} / ${result.flush_latency_ms_p99}`],
      ['max rows queued (pending)', maxPending],
      ['commit errors', errors],
    ];
    const width = Math.max(...table.map(([k]) => k.length));
    for (const [k, v] of table) console.log(`${k.padEnd(width)}  ${v}`);
    console.log(JSON.stringify(result));
    if (result.rows_in_table !== N || errors) process.exitCode = 1;
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
