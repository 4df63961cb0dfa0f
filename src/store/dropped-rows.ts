// Rows the event log lets go of without writing them: never silently. Each is counted by reason for /metrics
// (`bridge_event_log_rows_dropped_total{reason}`) and logged a burst at a time, as the bridge logs what can happen
// in floods: the first drop at once, then at most one line per window with the count by reason.
import { BurstLog, LOG_WINDOW_MS } from '../core/burst-log.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';

export type DropReason = 'queue_full' | 'refused' | 'shutdown';

export class DroppedRows {
  /** Rows dropped since the start, by reason. */
  readonly counts: Record<DropReason, number> = { queue_full: 0, refused: 0, shutdown: 0 };
  private lastRefusal: unknown;
  private readonly burst: BurstLog<DropReason>;

  constructor(clock: Clock, log: Logger, maxRows: number) {
    const why: Record<DropReason, string> = {
      queue_full: `more than EVENT_LOG_QUEUE_MAX_ROWS=${maxRows} rows waited for the database`,
      refused: 'the database refused them',
      shutdown: 'the bridge stopped before the database took them',
    };
    this.burst = new BurstLog({
      clock,
      windowMs: LOG_WINDOW_MS,
      report: (counts, rows) => {
        const reasons = [...counts].map(([reason, n]) => `${n} because ${why[reason]}`).join('; ');
        const err = counts.has('refused') ? { err: this.lastRefusal } : {};
        log.error(
          { rows, reasons: Object.fromEntries(counts), ...err },
          `event log rows dropped: ${rows} (${reasons})`,
        );
      },
    });
  }

  /** `err`: why the database refused them (the last refusal is in the next line logged). */
  record(reason: DropReason, rows: number, err?: unknown): void {
    if (rows === 0) return;
    this.counts[reason] += rows;
    if (err !== undefined) this.lastRefusal = err;
    this.burst.record(reason, rows);
  }

  /** Logs at once what the current window has not logged yet: the bridge is stopping. */
  flush(): void {
    this.burst.flush();
  }
}
