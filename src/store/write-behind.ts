// The event log and session changes, written off the per-message path. Changes are queued in memory and
// committed in one transaction per group commit: the first change starts a window of `flushMs`; when it ends
// (and the previous commit has finished) everything queued is written at once. An event's row is kept in memory
// until its outcome is final, so each commit is a few multi-row upserts however many events changed, and an
// event accepted and answered within one window becomes a single insert.
// Each statement is a round trip through the event loop, which under load waits a whole busy turn: a commit is as
// few statements as its rows allow, and one that is a single statement runs without BEGIN/COMMIT (atomic by
// itself). With 400-row statements in a transaction, commits at ~10k events/s took hundreds of ms and a crash lost
// rows up to 0.7 s old; see bench/crash-loss.ts and O2.
import type { Knex } from 'knex';
import type { EventRecord } from '../core/observer.js';
import type { SessionRecord } from '../core/sessions.js';
import type { Logger } from '../shared/logger.js';

/** An `events` row: the core's record, column for column (timestamps in epoch ms, as the core holds them). */
export type EventRow = EventRecord;

/** A `sessions` row: the core's record, column for column. */
export type SessionRow = SessionRecord;

type EventPatch = Partial<Omit<EventRow, 'event_id'>>;

/**
 * Rows per multi-row statement: 13 columns x 2,500 rows = 32,500 bound values, under SQLite's 32,766 (since 3.32)
 * and PostgreSQL's 65,535; the SQL text (~110 KB) stays under SQLite's 1 MB.
 */
const ROWS_PER_STATEMENT = 2_500;

/**
 * `columns` as they are, when they name every field of `R`: a field added to the spec (so to the record) fails to
 * compile here until it has a column (and a migration), rather than being dropped silently on write.
 */
function everyColumn<R>() {
  return <const C extends readonly (keyof R)[]>(...columns: C & ([Exclude<keyof R, C[number]>] extends [never] ? unknown : { missing: Exclude<keyof R, C[number]> }[])) => columns;
}

const EVENT_COLUMNS = everyColumn<EventRow>()('event_id', 'app_id', 'agent_id', 'thread_id', 'session_key', 'status', 'outcome', 'code', 'payload_bytes', 'tokens_used', 'received_at', 'completed_at', 'latency_ms');
const SESSION_COLUMNS = everyColumn<SessionRow>()('session_key', 'agent_id', 'app_id', 'thread_id', 'created_at', 'expires_at');

/**
 * A multi-row upsert as SQL text, made once per table and row count. Knex's query compiler took a tenth of the
 * bridge's time under event load (it re-quotes every column of every row each commit); this statement means the
 * same as `insert(rows).onConflict(key).merge()` and is valid SQLite and PostgreSQL (knex.raw numbers the `?` as
 * `$1`, `$2`… for pg; PostgreSQL takes each value's type from its target column). A key appears once per batch (the
 * queues are maps by key): PostgreSQL refuses a statement that would update one row twice.
 */
function upsertStatement(table: string, columns: readonly string[], key: string): (rows: number) => string {
  const cache = new Map<number, string>();
  const names = columns.map((c) => `"${c}"`).join(', ');
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  const updates = columns.filter((c) => c !== key).map((c) => `"${c}" = excluded."${c}"`).join(', ');
  return (rows) => {
    let sql = cache.get(rows);
    if (!sql) {
      sql = `INSERT INTO "${table}" (${names}) VALUES ${Array(rows).fill(tuple).join(', ')} ON CONFLICT ("${key}") DO UPDATE SET ${updates}`;
      cache.set(rows, sql);
    }
    return sql;
  };
}
const upsertEvents = upsertStatement('events', EVENT_COLUMNS, 'event_id');
const upsertSessions = upsertStatement('sessions', SESSION_COLUMNS, 'session_key');

const deleteSessions = (keys: number) => `DELETE FROM "sessions" WHERE "session_key" IN (${Array(keys).fill('?').join(', ')})`;

function bindings<R>(rows: R[], columns: readonly (keyof R)[]): Knex.Value[] {
  const out: Knex.Value[] = [];
  for (const row of rows) for (const c of columns) out.push((row[c] ?? null) as Knex.Value);
  return out;
}

interface Batch {
  events: EventRow[];
  sessionUpserts: SessionRow[];
  sessionDeletes: string[];
}

/** A batch as SQL statements with their bound values, as few as ROWS_PER_STATEMENT allows. */
function statements(batch: Batch): [string, Knex.Value[]][] {
  const out: [string, Knex.Value[]][] = [];
  for (let i = 0; i < batch.events.length; i += ROWS_PER_STATEMENT) {
    const rows = batch.events.slice(i, i + ROWS_PER_STATEMENT);
    out.push([upsertEvents(rows.length), bindings(rows, EVENT_COLUMNS)]);
  }
  for (let i = 0; i < batch.sessionUpserts.length; i += ROWS_PER_STATEMENT) {
    const rows = batch.sessionUpserts.slice(i, i + ROWS_PER_STATEMENT);
    out.push([upsertSessions(rows.length), bindings(rows, SESSION_COLUMNS)]);
  }
  for (let i = 0; i < batch.sessionDeletes.length; i += ROWS_PER_STATEMENT) {
    const keys = batch.sessionDeletes.slice(i, i + ROWS_PER_STATEMENT);
    out.push([deleteSessions(keys.length), keys]);
  }
  return out;
}

export class WriteBehind {
  /** Events whose outcome is still pending: their rows, so an update can be written as a whole row. */
  private readonly open = new Map<string, EventRow>();
  private dirtyEvents = new Map<string, EventRow>();
  private sessionUpserts = new Map<string, SessionRow>();
  private sessionDeletes = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private rowsBeingWritten = 0;
  private closed = false;

  constructor(
    private readonly db: Knex,
    private readonly flushMs: number,
    private readonly log: Logger,
    /** Told after each group commit: its rows and how long it took (benchmarks, metrics). */
    private readonly onCommit: (rows: number, ms: number) => void = () => {},
  ) {}

  insertEvent(row: EventRow): void {
    if (row.outcome === 'pending') this.open.set(row.event_id, row);
    this.dirtyEvents.set(row.event_id, row);
    this.schedule();
  }

  updateEvent(eventId: string, patch: EventPatch): void {
    const row = this.open.get(eventId);
    if (!row) {
      this.log.error({ event_id: eventId }, 'event log update for an event that is not open; ignored');
      return;
    }
    Object.assign(row, patch);
    if (row.outcome !== 'pending') this.open.delete(eventId);
    this.dirtyEvents.set(eventId, row);
    this.schedule();
  }

  upsertSession(row: SessionRow): void {
    this.sessionDeletes.delete(row.session_key);
    this.sessionUpserts.set(row.session_key, row);
    this.schedule();
  }

  deleteSessions(keys: string[]): void {
    for (const key of keys) {
      this.sessionUpserts.delete(key);
      this.sessionDeletes.add(key);
    }
    this.schedule();
  }

  /** Changes not yet committed: queued, or in the commit under way. */
  get pending(): number {
    return this.dirtyEvents.size + this.sessionUpserts.size + this.sessionDeletes.size + this.rowsBeingWritten;
  }

  /** Commits everything queued so far (after any commit under way); resolves when it is in the database. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // The batch is taken when the previous commit has finished, so one commit carries everything queued
    // meanwhile: commits never pile up behind each other, however slow the disk.
    this.writing = this.writing.then(() => this.write(this.take()));
    return this.writing;
  }

  /** Flushes and stops; a change after this is logged as lost rather than dropped silently. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private schedule(): void {
    if (this.closed) {
      this.log.error({ pending: this.pending }, 'event log change after close; it will not be written');
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  private take(): Batch {
    const batch = {
      // A copy: the row may change again while this commit is under way; the change is queued anew.
      events: [...this.dirtyEvents.values()].map((row) => ({ ...row })),
      sessionUpserts: [...this.sessionUpserts.values()],
      sessionDeletes: [...this.sessionDeletes],
    };
    this.dirtyEvents = new Map();
    this.sessionUpserts = new Map();
    this.sessionDeletes = new Set();
    return batch;
  }

  private async write(batch: Batch): Promise<void> {
    const size = batch.events.length + batch.sessionUpserts.length + batch.sessionDeletes.length;
    if (size === 0) return;
    this.rowsBeingWritten = size;
    const started = performance.now();
    try {
      const sql = statements(batch);
      if (sql.length === 1) await this.db.raw(...sql[0]!);
      else {
        await this.db.transaction(async (trx) => {
          for (const statement of sql) await trx.raw(...statement);
        });
      }
      this.onCommit(size, performance.now() - started);
    } catch (err) {
      // Dropped rather than retried forever: the bridge keeps serving, and the log says what was lost.
      this.log.error({ err, rows: size }, 'event log group commit failed; these rows are lost');
    } finally {
      this.rowsBeingWritten = 0;
    }
  }
}
