// Scenario resume: what the resume extension (R1-R9) costs a bridge whose apps opt in with `?resume=1`, against the
// same apps connected plainly. Throughput and latency: scenarios 1's and 2's streaming load against one bridge,
// each run once plainly and once resumable. Memory: many events held open mid-stream (bench/load/held.ts), on a
// fresh bridge for each mode (a process's RSS does not shrink back after a run), the bridge's RSS, V8 heap and
// resume buffer read before and while they are held, each after a full GC (through the bridge's inspector).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { procRssKb, round } from '../load/common.js';
import type { HeldConfig, HeldResult } from '../load/held.js';
import type { StreamingConfig, StreamingResult } from '../load/streaming.js';
import {
  collectGarbage,
  provision,
  runGenerator,
  runtimeDelta,
  runtimeOf,
  shutdown,
  startBridge,
  startGenerator,
} from '../processes.js';
import { ratio, type Table } from '../report.js';
import { scrape } from './cluster-counters.js';
import type { Settings } from './settings.js';

const label = (resume: boolean) => (resume ? '?resume=1' : 'plain');

/** A streaming run, with what the bridge's resume buffer held after it and what its bounds dropped during it. */
type ModeResult = StreamingResult & { resume_dropped_bytes?: number; resume_buffer_bytes?: number | null };

/** bridge_resume_dropped_bytes_total, every reason added up. */
function resumeDropped(metrics: Map<string, number>): number {
  let sum = 0;
  for (const [key, value] of metrics) if (key.startsWith('bridge_resume_dropped_bytes_total{')) sum += value;
  return sum;
}

async function streaming(s: Settings) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const bridge = await startBridge(dir, s.profileDir);
  try {
    const creds = await provision(bridge.admin, s.m, s.n);
    const run = async (resume: boolean, rate?: number): Promise<StreamingResult> => {
      console.error(
        `  bridge, apps ${label(resume)}: ${rate === undefined ? 'closed loop' : `${rate} fragments/s`}, ${s.warmupS + s.durationS} s...`,
      );
      const cfg: StreamingConfig = {
        scenario: 'streaming',
        target: 'bridge',
        url: bridge.url,
        serverPid: bridge.pid,
        m: s.m,
        n: s.n,
        window: s.window,
        payloadBytes: s.payloadBytes,
        warmupS: s.warmupS,
        durationS: s.durationS,
        resume,
        ...creds,
        ...(rate === undefined ? {} : { rate }),
      };
      const [before, droppedBefore] = [await runtimeOf(bridge), resumeDropped(await scrape(bridge))];
      const result: ModeResult = await runGenerator<StreamingResult>(cfg);
      result.bridge_gc = runtimeDelta(before, await runtimeOf(bridge));
      if (bridge.child.exitCode !== null) throw new Error(`the bridge exited during the run:\n${bridge.logs()}`);
      const after = await scrape(bridge);
      result.resume_dropped_bytes = resumeDropped(after) - droppedBefore;
      result.resume_buffer_bytes = after.get('bridge_resume_buffer_bytes') ?? null;
      return result;
    };
    const closed = { plain: await run(false), resume: await run(true) };
    const open: { rate: number; plain: ModeResult; resume: ModeResult }[] = [];
    for (const rate of s.resumeRates) open.push({ rate, plain: await run(false, rate), resume: await run(true, rate) });
    return { closed, open };
  } finally {
    await shutdown(bridge, dir);
  }
}

/** The bridge's memory at one moment: RSS from /proc, its V8 heap and what it keeps for resumes from /metrics. */
interface Memory {
  rss_kb: number | null;
  heap_used_kb: number | null;
  resume_buffer_bytes: number | null;
  resume_events: number | null;
  /** What every event keeps of its streamed text (for an empty-content reply), resumable or not. */
  streamed_text_bytes: number | null;
}

async function memoryOf(bridge: Awaited<ReturnType<typeof startBridge>>): Promise<Memory> {
  await collectGarbage(bridge);
  const metrics = await scrape(bridge);
  const heap = metrics.get('nodejs_heap_size_used_bytes');
  return {
    rss_kb: procRssKb(bridge.pid),
    heap_used_kb: heap === undefined ? null : Math.round(heap / 1024),
    resume_buffer_bytes: metrics.get('bridge_resume_buffer_bytes') ?? null,
    resume_events: metrics.get('bridge_resume_events') ?? null,
    streamed_text_bytes: metrics.get('bridge_streamed_text_bytes') ?? null,
  };
}

/** How long the bridge is left alone before a reading, for the writes and collections the load set off to end. */
const SETTLE_MS = 1000;

async function held(s: Settings, resume: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const bridge = await startBridge(dir, undefined, {}, true);
  try {
    const creds = await provision(bridge.admin, s.m, s.n);
    console.error(
      `  bridge, apps ${label(resume)}: ${s.resumeEvents} events held with ${s.resumeFragments} fragments each...`,
    );
    const cfg: HeldConfig = {
      scenario: 'held',
      url: bridge.url,
      ...creds,
      events: s.resumeEvents,
      fragments: s.resumeFragments,
      payloadBytes: s.payloadBytes,
      resume,
    };
    const readings: Partial<Record<'before' | 'held', Memory>> = {};
    let reading = Promise.resolve();
    const generator = startGenerator<HeldResult>(cfg, (line) => {
      const at = line === 'READY' ? 'before' : line === 'HOLDING' ? 'held' : null;
      if (!at) return;
      reading = reading.then(async () => {
        await sleep(SETTLE_MS);
        readings[at] = await memoryOf(bridge);
        generator.go();
      });
    });
    const result = await generator.result;
    await reading;
    if (bridge.child.exitCode !== null) throw new Error(`the bridge exited during the run:\n${bridge.logs()}`);
    return { result, before: readings.before!, held: readings.held! };
  } finally {
    await shutdown(bridge, dir);
  }
}

const difference = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b);
const perEvent = (bytes: number | null, events: number) => (bytes === null ? null : Math.round(bytes / events));

export async function resume(s: Settings) {
  console.error(`Scenario resume: token streaming and events held open, apps plain vs ?resume=1`);
  const { closed, open } = await streaming(s);
  const memory = { plain: await held(s, false), resume: await held(s, true) };

  const both = (f: (x: ModeResult) => number | null, x: { plain: ModeResult; resume: ModeResult }) => {
    const [p, r] = [f(x.plain), f(x.resume)];
    return [p, r, ratio(r, p), p === null || r === null ? null : round(r - p)];
  };
  const streamingRows = [
    ['closed loop: fragments/s delivered', ...both((x) => x.fragments_per_s, closed)],
    ['closed loop: latency p50 (ms)', ...both((x) => x.latency_ms.p50, closed)],
    ['closed loop: latency p99 (ms)', ...both((x) => x.latency_ms.p99, closed)],
    ['closed loop: frame bytes at the app (mean)', ...both((x) => x.fragment_bytes_mean, closed)],
    ['closed loop: bridge CPU % (of one core)', ...both((x) => x.server_cpu_pct, closed)],
    ['closed loop: resume bytes dropped by the bounds', ...both((x) => x.resume_dropped_bytes ?? null, closed)],
    ['closed loop: resume buffer after (bytes)', ...both((x) => x.resume_buffer_bytes ?? null, closed)],
    ...open.flatMap((x) => [
      [`${x.rate}/s: delivered/s`, ...both((y) => y.fragments_per_s, x)],
      [`${x.rate}/s: latency p50 (ms)`, ...both((y) => y.latency_ms.p50, x)],
      [`${x.rate}/s: latency p99 (ms)`, ...both((y) => y.latency_ms.p99, x)],
      [`${x.rate}/s: bridge CPU % (of one core)`, ...both((y) => y.server_cpu_pct, x)],
    ]),
  ];
  const streamingTable: Table = {
    title: `Scenario resume 1: token streaming through one bridge, apps plain vs ?resume=1. ${s.m} agents x ${s.n} apps = ${s.m * s.n} streams; closed loop (${s.window} in flight each) and open loop at ${s.resumeRates.join(', ')} fragments/s (latency from each fragment's due time); ${s.durationS} s per run after ${s.warmupS} s warm-up`,
    columns: ['', 'plain', '?resume=1', 'resume/plain', 'resume - plain'],
    rows: streamingRows,
  };

  const grown = (m: { before: Memory; held: Memory }, f: (x: Memory) => number | null) =>
    difference(f(m.held), f(m.before));
  const memoryRow = (name: string, f: (m: Awaited<ReturnType<typeof held>>) => number | null, perHeldEvent = false) => {
    const [p, r] = [f(memory.plain), f(memory.resume)];
    const per = (x: number | null) => (perHeldEvent ? perEvent(x, s.resumeEvents) : x);
    return [name, per(p), per(r), per(difference(r, p))];
  };
  const kb = (x: number | null) => (x === null ? null : x * 1024);
  const memoryTable: Table = {
    title: `Scenario resume 2: the bridge's memory with ${s.resumeEvents} events held open (${s.resumeFragments} fragments streamed each, no reply), apps plain vs ?resume=1; a fresh bridge each, read ${SETTLE_MS} ms after the load, after a full GC`,
    columns: ['', 'plain', '?resume=1', 'resume - plain'],
    rows: [
      memoryRow('RSS before (KiB)', (m) => m.before.rss_kb),
      memoryRow('RSS held (KiB)', (m) => m.held.rss_kb),
      memoryRow('RSS per held event (B)', (m) => kb(grown(m, (x) => x.rss_kb)), true),
      memoryRow('V8 heap per held event (B)', (m) => kb(grown(m, (x) => x.heap_used_kb)), true),
      memoryRow('bridge_resume_events added', (m) => grown(m, (x) => x.resume_events)),
      memoryRow('bridge_resume_buffer_bytes per held event', (m) => grown(m, (x) => x.resume_buffer_bytes), true),
      memoryRow('bridge_streamed_text_bytes per held event', (m) => grown(m, (x) => x.streamed_text_bytes), true),
      memoryRow('fragment frame bytes at the app (mean)', (m) => m.result.fragment_bytes_mean),
    ],
  };

  const json = {
    streaming: {
      closed: {
        ...closed,
        ratio_resume_over_plain: ratio(closed.resume.fragments_per_s, closed.plain.fragments_per_s),
      },
      open: open.map((x) => ({ ...x, added_p99_ms: round(x.resume.latency_ms.p99 - x.plain.latency_ms.p99) })),
    },
    memory: { events: s.resumeEvents, fragments: s.resumeFragments, ...memory },
  };
  const errors = [
    closed.plain,
    closed.resume,
    ...open.flatMap((x) => [x.plain, x.resume]),
    memory.plain.result,
    memory.resume.result,
  ].reduce((n, x) => n + x.errors, 0);
  return { json, tables: [streamingTable, memoryTable], targets: [], errors };
}
