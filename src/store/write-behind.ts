// The event log and session changes, written off the per-message path. Changes are queued in memory and
// committed in one transaction per group commit: the first change starts a window of `flushMs`; when it ends
// (and the previous commit has finished) everything queued is written at once. An event's row is kept in memory
// until its outcome is final, so each commit is a few multi-row upserts however many events changed, and an
// event accepted and answered within one window becomes a single insert.
// Each statement is a round trip through the event loop, which under load waits a whole busy turn: a commit is as
// few statements as its rows allow, and one that is a single statement runs without BEGIN/COMMIT (atomic by
// itself). With 400-row statements in a transaction, commits at ~10k events/s took hundreds of ms and a crash lost
// rows up to 0.7 s old; see bench/crash-loss.ts and O2.
// A commit the database does not take (unreachable, restarting, locked, out of disk) keeps its rows, merged with what
// comes meanwhile, and is retried with a growing delay; the rows waiting are bounded, and what goes over the bound,
// or is refused by the database for what it holds, is dropped, counted and logged (O15). A commit holds at most
// `commitMaxRows` rows, the oldest first, and the next follows at once: a backlog is written a bounded batch at a
// time, so a database with room for part of it takes that part (one transaction of 100,000 rows after a disk-full
// outage filled the disk again, was rolled back, and so on for ever). Nothing here ever makes the core wait: the
// bridge relays whatever the database does.
import type { Knex } from 'knex';
import { systemClock, type Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { commitStatements, dialectOf, type Dialect } from './commit-sql.js';
import { ChangeQueue, batchSize, halves, type Batch, type EventRow, type SessionRow } from './change-queue.js';
import { failureOf, refusesRows } from './commit-failure.js';
import { DroppedRows, type DropReason } from './dropped-rows.js';

/** The rows it writes, for its callers (defined beside the queue that holds them). */
export type { EventRow, SessionRow };

type EventPatch = Partial<Omit<EventRow, 'event_id'>>;

/**
 * Rows a commit writes at most by default (EVENT_LOG_COMMIT_MAX_ROWS): four statements on PostgreSQL, one on SQLite,
 * a few MB of either's write-ahead log, and far more than a group-commit window gathers at the bridge's capacity (~17k events/s x 20 ms).
 */
export const DEFAULT_COMMIT_MAX_ROWS = 10_000;

/** The first retry of a failed commit waits this long; each next one twice as long, up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;
/**
 * Over the bound, this share of it goes too, at once. Letting go of a Map's oldest entry one row at a time is
 * quadratic in V8 (finding the first entry walks past the holes earlier deletions left): at the default bound,
 * 100,000 rows arriving during an outage took 4.1 s of the event loop one at a time, 0.19 s a hundredth at a time.
 * The rows dropped early are those the next rows would have pushed out anyway.
 */
const DROP_AHEAD = 0.01;
/** While commits fail, one of them is logged at error this often (the others at debug). */
const FAILURE_LOG_INTERVAL_MS = 60_000;

/**
 * Halvings at most of one batch to find the rows a database refuses: one bad row among 100,000 takes 17 (and as many
 * commits of good halves). Where every row fails (a column too narrow for all of them), the parts left then are
 * tried once each and dropped, rather than each row alone.
 */
const ISOLATION_HALVINGS = 64;

export interface WriteBehindOptions {
  /** The group-commit window (EVENT_LOG_FLUSH_MS). */
  flushMs: number;
  /** Rows waiting at most, queued or in the commit under way (EVENT_LOG_QUEUE_MAX_ROWS). */
  maxRows: number;
  /** Rows one commit writes at most, the oldest first (EVENT_LOG_COMMIT_MAX_ROWS; DEFAULT_COMMIT_MAX_ROWS). */
  commitMaxRows?: number | undefined;
  /** The delays between retries of a failed commit, from first to longest (tests shorten them). */
  retryMs?: { first: number; max: number } | undefined;
  /**
   * The bridge's clock: the burst log of dropped rows, and how long commits have failed (the log lines, /readyz,
   * /metrics). Commits and the delays between retries run on real time: they wait on I/O.
   */
  clock?: Clock;
  /** Told after each group commit: its rows and how long it took (benchmarks, metrics). */
  onCommit?(rows: number, ms: number): void;
}

export class WriteBehind {
  /** Events whose outcome is still pending: their rows, so an update can be written as a whole row. */
  private readonly open = new Map<string, EventRow>();
  private readonly queue = new ChangeQueue();
  private readonly drops: DroppedRows;
  private readonly retryMs: { first: number; max: number };
  /** The end of the group-commit window, or the next retry while commits fail. */
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  /** Commits that failed in a row, since when (the clock), why the last one failed, and when one was logged at error. */
  private failures = 0;
  private failingSince = 0;
  private lastFailure: { code?: string; message: string } = { message: '' };
  private failureLoggedAt = 0;
  private readonly clock: Clock;
  private readonly commitMaxRows: number;
  private readonly dialect: Dialect;

  constructor(
    private readonly db: Knex,
    private readonly log: Logger,
    private readonly options: WriteBehindOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.commitMaxRows = options.commitMaxRows ?? DEFAULT_COMMIT_MAX_ROWS;
    this.dialect = dialectOf(db);
    this.drops = new DroppedRows(this.clock, log, options.maxRows);
    this.retryMs = options.retryMs ?? { first: RETRY_FIRST_MS, max: RETRY_MAX_MS };
  }

  insertEvent(row: EventRow): void {
    if (row.outcome === 'pending') this.open.set(row.event_id, row);
    this.queue.event(row);
    this.queued();
  }

  updateEvent(eventId: string, patch: EventPatch): void {
    const row = this.open.get(eventId);
    if (!row) {
      this.log.error({ event_id: eventId }, 'event log update for an event that is not open; ignored');
      return;
    }
    Object.assign(row, patch);
    if (row.outcome !== 'pending') this.open.delete(eventId);
    this.queue.event(row);
    this.queued();
  }

  upsertSession(row: SessionRow): void {
    this.queue.upsertSession(row);
    this.queued();
  }

  deleteSessions(keys: string[]): void {
    for (const key of keys) this.queue.deleteSession(key);
    this.queued();
  }

  /** Changes not yet committed: queued, in the commit under way, or waiting for a retry. */
  get pending(): number {
    return this.queue.size;
  }

  /**
   * While commits fail and rows wait for them: for how long (on the clock), why the last one failed, and how many
   * rows wait; undefined once the database takes them (or while nothing waits: nothing is known to fail then).
   */
  get failing(): { forMs: number; reason: string; waiting: number } | undefined {
    const waiting = this.queue.size;
    if (!this.failures || !waiting) return undefined;
    const { code, message } = this.lastFailure;
    const reason = code && !message.startsWith(code) ? `${code}: ${message}` : message;
    return { forMs: Math.max(0, this.clock.now() - this.failingSince), reason, waiting };
  }

  /** Rows dropped since the start, by reason (never silently: each is logged too). */
  get dropped(): Readonly<Record<DropReason, number>> {
    return this.drops.counts;
  }

  /**
   * Commits everything queued so far now (after any commit under way), without waiting for a retry that is due
   * later; resolves when it is in the database, or when the database did not take it (its rows then wait for the
   * next retry).
   */
  flush(): Promise<void> {
    this.cancelTimer();
    // The batch is taken when the previous commit has finished, so one commit carries everything queued
    // meanwhile: commits never pile up behind each other, however slow the disk.
    this.writing = this.writing.then(() => this.write());
    return this.writing;
  }

  /** Flushes and stops; what the database did not take by then, and any change after this, is dropped and logged. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    this.cancelTimer();
    this.dropAtShutdown();
    this.drops.flush();
  }

  private dropAtShutdown(): void {
    const left = this.queue.queued;
    this.queue.dropOldest(left);
    this.drops.record('shutdown', left);
  }

  private queued(): void {
    if (this.closed) return this.dropAtShutdown();
    const over = this.queue.size - this.options.maxRows;
    if (over > 0)
      this.drops.record('queue_full', this.queue.dropOldest(over + Math.floor(this.options.maxRows * DROP_AHEAD)));
    this.arm();
  }

  /** The end of a group-commit window, or while commits fail the next retry (which takes every row queued). */
  private arm(): void {
    if (this.timer || this.closed) return;
    if (this.failures) this.setTimer(this.retryDelay(), () => void this.flush());
    else this.setTimer(this.options.flushMs, () => this.windowEnded());
  }

  private retryDelay(): number {
    return Math.min(this.retryMs.max, this.retryMs.first * 2 ** (this.failures - 1));
  }

  private windowEnded(): void {
    // A commit that failed after this window began has set its retry; the rows wait for it.
    this.writing = this.writing.then(() => (this.failures ? undefined : this.write()));
  }

  private setTimer(ms: number, fn: () => void): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      fn();
    }, ms);
    this.timer.unref();
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Commits what is queued, a batch of at most `commitMaxRows` at a time, the oldest first, one after the other for
   * as long as more than a batch waits (what comes during the last one waits for the next window). A batch the
   * database cannot take now goes back to the head of the queue, and everything waits for a retry; rows it refuses
   * for what they hold are found by committing halves of the batch, and dropped alone.
   */
  private async write(): Promise<void> {
    if (!this.queue.queued) return;
    for (let more = true; more;) {
      more = this.queue.queued > this.commitMaxRows;
      if (!(await this.writeBatch(this.queue.take(this.commitMaxRows)))) return;
    }
    // Only now is an outage over: a backlog the database takes in part, and then no more (a disk that fills again),
    // goes on being one outage, its retries slowing down and its start what /readyz measures.
    this.succeeded();
  }

  /** Commits one batch taken from the queue; false when the database did not take it (it waits for a retry). */
  private async writeBatch(batch: Batch): Promise<boolean> {
    const parts = [batch];
    let halvings = 0;
    for (let part = parts.shift(); part; part = parts.shift()) {
      const size = batchSize(part);
      const started = performance.now();
      try {
        await this.commit(part);
        this.queue.settle(part === batch ? undefined : part);
        this.options.onCommit?.(size, performance.now() - started);
      } catch (err) {
        if (!refusesRows(err)) {
          // All of it again later, the newer changes queued since winning: every statement is an upsert or a
          // delete by key, so a commit that failed after the database applied it does no harm when repeated.
          let lost = 0;
          for (const left of [part, ...parts].reverse()) lost += this.queue.putBack(left);
          this.drops.record('queue_full', lost);
          this.failed(err);
          return false;
        }
        if (size > 1 && ++halvings <= ISOLATION_HALVINGS) {
          parts.unshift(...halves(part));
        } else {
          this.queue.settle(part);
          this.drops.record('refused', size, failureOf(err));
        }
      }
    }
    return true;
  }

  private async commit(batch: Batch): Promise<void> {
    const sql = commitStatements(batch, this.dialect);
    if (sql.length === 1) await this.db.raw(...sql[0]!);
    else {
      await this.db.transaction(async (trx) => {
        for (const statement of sql) await trx.raw(...statement);
      });
    }
  }

  private failed(err: unknown): void {
    const now = this.clock.now();
    if (!this.failures) this.failingSince = now;
    this.failures++;
    this.lastFailure = failureOf(err);
    const fields = {
      err: this.lastFailure,
      waiting: this.queue.size,
      failed_commits: this.failures,
      retry_in_ms: this.retryDelay(),
      failing_for_ms: Math.round(now - this.failingSince),
    };
    // At the start of an outage, then once a minute while it lasts: a retry every few seconds is not news.
    if (this.failures === 1 || now - this.failureLoggedAt >= FAILURE_LOG_INTERVAL_MS) {
      this.failureLoggedAt = now;
      this.log.error(
        fields,
        'event log: the database did not take a group commit; its rows wait in memory (at most EVENT_LOG_QUEUE_MAX_ROWS) and it is retried',
      );
    } else {
      this.log.debug(fields, 'event log: group commit failed again');
    }
    this.cancelTimer();
    this.arm();
  }

  private succeeded(): void {
    if (this.failures) {
      this.log.info(
        { failed_commits: this.failures, unavailable_ms: Math.round(this.clock.now() - this.failingSince) },
        'event log: the database takes group commits again',
      );
      this.failures = 0;
      this.cancelTimer();
    }
    if (this.queue.queued) this.arm();
  }
}
