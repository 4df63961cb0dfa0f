// The changes waiting for the write-behind's next commit: event rows and session changes, at most one per key (the
// newest), so that a commit writes each key once (PostgreSQL refuses a statement that updates one row twice) and a
// row changed again before its commit costs nothing more.
import type { EventRow, SessionRow } from './write-behind.js';

/** What one commit writes. */
export interface Batch {
  events: EventRow[];
  sessionUpserts: SessionRow[];
  sessionDeletes: string[];
}

export const batchSize = (b: Batch) => b.events.length + b.sessionUpserts.length + b.sessionDeletes.length;

/** The batch in two, for finding the rows a database refuses: each half keeps every change of a key it holds. */
export function halves(b: Batch): [Batch, Batch] {
  let left = Math.ceil(batchSize(b) / 2);
  const split = <T>(list: T[]): [T[], T[]] => {
    const n = Math.min(left, list.length);
    left -= n;
    return [list.slice(0, n), list.slice(n)];
  };
  const [events1, events2] = split(b.events);
  const [upserts1, upserts2] = split(b.sessionUpserts);
  const [deletes1, deletes2] = split(b.sessionDeletes);
  return [
    { events: events1, sessionUpserts: upserts1, sessionDeletes: deletes1 },
    { events: events2, sessionUpserts: upserts2, sessionDeletes: deletes2 },
  ];
}

export class ChangeQueue {
  /** Rows whose outcome is final, in the order they became so. */
  private finished = new Map<string, EventRow>();
  /** Rows of events still in flight (`pending`). */
  private inFlight = new Map<string, EventRow>();
  /** Per session key its newest change: the row to upsert, or null to delete it. */
  private sessions = new Map<string, SessionRow | null>();

  get size(): number {
    return this.finished.size + this.inFlight.size + this.sessions.size;
  }

  event(row: EventRow): void {
    const pending = row.outcome === 'pending';
    (pending ? this.finished : this.inFlight).delete(row.event_id);
    (pending ? this.inFlight : this.finished).set(row.event_id, row);
  }

  upsertSession(row: SessionRow): void {
    this.sessions.delete(row.session_key); // to the end: the order drops follow
    this.sessions.set(row.session_key, row);
  }

  deleteSession(key: string): void {
    this.sessions.delete(key);
    this.sessions.set(key, null);
  }

  /** Everything queued, as one batch; the queue is then empty. */
  take(): Batch {
    const batch: Batch = {
      // Copies: the writer changes an open event's row in place when it ends, while this batch is being written.
      events: [...this.finished.values(), ...this.inFlight.values()].map((row) => ({ ...row })),
      sessionUpserts: [],
      sessionDeletes: [],
    };
    for (const [key, row] of this.sessions) {
      if (row) batch.sessionUpserts.push(row);
      else batch.sessionDeletes.push(key);
    }
    this.finished = new Map();
    this.inFlight = new Map();
    this.sessions = new Map();
    return batch;
  }

  /**
   * A batch the database did not take, back in the queue ahead of what was queued since (it is older), except the
   * keys changed since: their newer change stands, as it would have overwritten this one in the database.
   */
  putBack(batch: Batch): void {
    const finished = new Map<string, EventRow>();
    const inFlight = new Map<string, EventRow>();
    for (const row of batch.events) {
      if (this.finished.has(row.event_id) || this.inFlight.has(row.event_id)) continue;
      (row.outcome === 'pending' ? inFlight : finished).set(row.event_id, row);
    }
    const sessions = new Map<string, SessionRow | null>();
    for (const row of batch.sessionUpserts) sessions.set(row.session_key, row);
    for (const key of batch.sessionDeletes) sessions.set(key, null);
    for (const key of this.sessions.keys()) sessions.delete(key);
    this.finished = new Map([...finished, ...this.finished]);
    this.inFlight = new Map([...inFlight, ...this.inFlight]);
    this.sessions = new Map([...sessions, ...this.sessions]);
  }

  /**
   * Drops up to `count` changes, the oldest finished rows first, and returns how many it dropped.
   *
   * Finished rows first: a finished row is what the log keeps for good, so dropping it loses one row, once. A row
   * still pending comes back whole when its event ends (the writer keeps open events' rows), so dropping it would
   * only put the loss off to a later drop and count it twice; pending rows and session changes go only when no
   * finished row is left (a bound below the events in flight). The oldest first: after an outage the log then holds
   * the most recent stretch, without a gap up to the present, and what waited longest is what gets let go.
   */
  dropOldest(count: number): number {
    let dropped = 0;
    for (const source of [this.finished, this.inFlight, this.sessions] as Map<string, unknown>[]) {
      for (const key of source.keys()) {
        if (dropped === count) return dropped;
        source.delete(key);
        dropped++;
      }
    }
    return dropped;
  }
}
