// The event log and session changes, written off the per-message path: queued in memory, coalesced (an event's
// insert and its later update become one row), and committed in one transaction per group commit, at most
// `flushMs` after the first queued change. A crash loses at most the changes of the commit window.
import type { Knex } from 'knex';
import type { Logger } from '../core/logger.js';

export interface EventRow {
  event_id: string;
  app_id: string;
  agent_id: string;
  thread_id: string | null;
  session_key: string | null;
  status: 'delivered' | 'rejected';
  outcome: string;
  code: string | null;
  payload_bytes: number;
  tokens_used: number | null;
  received_at: number;
  completed_at: number | null;
  latency_ms: number | null;
}

export interface SessionRow {
  session_key: string;
  agent_id: string;
  app_id: string;
  thread_id: string;
  created_at: number;
  expires_at: number;
}

type EventPatch = Partial<Omit<EventRow, 'event_id'>>;

/** SQLite allows 999 bound variables per statement; 13 columns x 60 rows stays under it. */
const ROWS_PER_INSERT = 60;

export class WriteBehind {
  private inserts = new Map<string, EventRow>();
  private updates = new Map<string, EventPatch>();
  private sessionUpserts = new Map<string, SessionRow>();
  private sessionDeletes = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly db: Knex,
    private readonly flushMs: number,
    private readonly log: Logger,
  ) {}

  insertEvent(row: EventRow): void {
    this.inserts.set(row.event_id, row);
    this.schedule();
  }

  updateEvent(eventId: string, patch: EventPatch): void {
    const pending = this.inserts.get(eventId);
    if (pending) Object.assign(pending, patch);
    else this.updates.set(eventId, { ...this.updates.get(eventId), ...patch });
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

  /** Changes queued and not yet committed. */
  get pending(): number {
    return this.inserts.size + this.updates.size + this.sessionUpserts.size + this.sessionDeletes.size;
  }

  /** Commits everything queued so far; resolves when it is in the database. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.take();
    this.writing = this.writing.then(() => this.write(batch));
    return this.writing;
  }

  /** Flushes and stops; later changes are refused with a log line rather than lost silently. */
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

  private take() {
    const batch = {
      inserts: [...this.inserts.values()],
      updates: [...this.updates],
      sessionUpserts: [...this.sessionUpserts.values()],
      sessionDeletes: [...this.sessionDeletes],
    };
    this.inserts = new Map();
    this.updates = new Map();
    this.sessionUpserts = new Map();
    this.sessionDeletes = new Set();
    return batch;
  }

  private async write(batch: ReturnType<WriteBehind['take']>): Promise<void> {
    const size = batch.inserts.length + batch.updates.length + batch.sessionUpserts.length + batch.sessionDeletes.length;
    if (size === 0) return;
    try {
      await this.db.transaction(async (trx) => {
        for (let i = 0; i < batch.inserts.length; i += ROWS_PER_INSERT) {
          await trx('events').insert(batch.inserts.slice(i, i + ROWS_PER_INSERT));
        }
        for (const [eventId, patch] of batch.updates) await trx('events').where({ event_id: eventId }).update(patch);
        for (let i = 0; i < batch.sessionUpserts.length; i += ROWS_PER_INSERT) {
          await trx('sessions').insert(batch.sessionUpserts.slice(i, i + ROWS_PER_INSERT)).onConflict('session_key').merge();
        }
        for (let i = 0; i < batch.sessionDeletes.length; i += 500) {
          await trx('sessions').whereIn('session_key', batch.sessionDeletes.slice(i, i + 500)).delete();
        }
      });
    } catch (err) {
      // The rows are dropped rather than retried forever: the bridge keeps serving, and the log says what was lost.
      this.log.error({ err, rows: size }, 'event log group commit failed; these rows are lost');
    }
  }
}
