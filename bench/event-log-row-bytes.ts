// The heap one event-log row waiting to be written holds (O15: EVENT_LOG_QUEUE_MAX_ROWS bounds the rows, so this
// bounds their bytes): 100,000 finished rows queued in a WriteBehind that never commits, typical (short ids, a short
// thread_id) and at their longest (ids of 64 characters, a thread_id of 121 astral characters, its session key).
//
//   node --expose-gc --import tsx bench/event-log-row-bytes.ts
import { LIMITS } from '../generated/index.js';
import { silentLogger } from '../src/shared/logger.js';
import { WriteBehind, type EventRow } from '../src/store/write-behind.js';

const ROWS = 100_000;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function row(i: number, longest: boolean): EventRow {
  const n = String(i).padStart(10, '0');
  const app = longest ? `${'a'.repeat(54)}${n}` : 'classroom-app-3k9x';
  const agent = longest ? `${'b'.repeat(54)}${n}` : 'tutor-7k2m';
  const thread = longest ? `${'\u{1F600}'.repeat(116)}${n.slice(5)}` : `lesson-${i}`;
  const at = Date.now();
  return {
    event_id: `01KEV${String(i).padStart(21, '0')}`,
    app_id: app,
    agent_id: agent,
    thread_id: thread,
    session_key: `svc:${app}:${thread}`,
    status: 'delivered',
    outcome: 'replied',
    code: longest ? 'RESUME_GAP' : null,
    payload_bytes: LIMITS.payloadMaxBytes,
    tokens_used: 1234.5,
    received_at: at,
    completed_at: at + 5,
    latency_ms: 5,
  };
}

for (const longest of [false, true]) {
  gc();
  const before = process.memoryUsage().heapUsed;
  // Never committed: the window is longer than the run, and the database is never reached.
  const writer = new WriteBehind({} as never, silentLogger, { flushMs: 2 ** 30, maxRows: ROWS });
  for (let i = 0; i < ROWS; i++) writer.insertEvent(row(i, longest));
  gc();
  const bytes = (process.memoryUsage().heapUsed - before) / ROWS;
  console.log(
    `${longest ? 'longest' : 'typical'}: ${writer.pending} rows waiting, ${Math.round(bytes)} bytes a row, ${((bytes * ROWS) / 2 ** 20).toFixed(0)} MiB in all`,
  );
}
