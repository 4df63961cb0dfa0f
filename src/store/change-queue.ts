// The changes waiting for the write-behind's next commit: event rows and session changes, at most one per key (the
// newest), so that a commit writes each key once (PostgreSQL refuses a statement that updates one row twice) and a
// row changed again before its commit costs nothing more.
import type { EventRecord } from '../core/observer.js';
import type { SessionRecord } from '../core/sessions.js';

/** An `events` row: the core's record, column for column (timestamps in epoch ms, as the core holds them). */
export type EventRow = EventRecord;

/** A `sessions` row: the core's record, column for column. */
export type SessionRow = SessionRecord;

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

/**
 * Every change waiting to be written: queued for the next commit, or taken by the commit under way until it is
 * settled (written, or refused and dropped) or put back (the database did not take it).
 */
export class ChangeQueue {
  /** Queued rows whose outcome is final, in the order they became so. */
  private finished = new Map<string, EventRow>();
  /** Queued rows of events still in flight (`pending`). */
  private inFlight = new Map<string, EventRow>();
  /** Per session key its newest queued change: the row to upsert, or null to delete it. */
  private sessions = new Map<string, SessionRow | null>();
  /**
   * The keys of the commit under way, of each kind, that still wait: not changed again since (the older version
   * goes either way then: overwritten in the database by the newer, or not put back) and not dropped.
   */
  private takenFinished = new Set<string>();
  private takenInFlight = new Set<string>();
  private takenSessions = new Set<string>();
  /** Keys of the commit under way dropped while it runs: if it fails, they are not put back, and are lost. */
  private droppedEvents = new Set<string>();
  private droppedSessions = new Set<string>();

  /** Rows waiting, each once. */
  get size(): number {
    return this.queued + this.takenFinished.size + this.takenInFlight.size + this.takenSessions.size;
  }

  /** Rows queued for the next commit. */
  get queued(): number {
    return this.finished.size + this.inFlight.size + this.sessions.size;
  }

  event(row: EventRow): void {
    const id = row.event_id;
    if (this.takenFinished.size + this.takenInFlight.size) {
      this.takenFinished.delete(id);
      this.takenInFlight.delete(id);
    }
    if (this.droppedEvents.size) this.droppedEvents.delete(id); // the row lives on in its newer version
    // An outcome goes from pending to final, never back.
    if (row.outcome === 'pending') this.inFlight.set(id, row);
    else {
      this.inFlight.delete(id);
      this.finished.set(id, row);
    }
  }

  upsertSession(row: SessionRow): void {
    this.sessionChanged(row.session_key);
    this.sessions.set(row.session_key, row);
  }

  deleteSession(key: string): void {
    this.sessionChanged(key);
    this.sessions.set(key, null);
  }

  private sessionChanged(key: string): void {
    this.takenSessions.delete(key);
    this.droppedSessions.delete(key);
    this.sessions.delete(key); // to the end: the order drops follow
  }

  /**
   * At most `max` of the rows queued, as one batch for the next commit (the one before it settled or put back): the
   * oldest first, finished rows in the order they became so, then rows of events in flight, then session changes.
   * The rest stay queued, for the commit after it.
   */
  take(max = Infinity): Batch {
    if (this.queued <= max) return this.takeAll();
    let left = max;
    const takeFrom = <V>(map: Map<string, V>, into: (key: string, value: V) => void): Set<string> => {
      const keys = new Set<string>();
      // One iterator, deleting behind it: linear in the rows taken (see dropOldest on a Map's holes).
      for (const [key, value] of map) {
        if (left === 0) break;
        map.delete(key);
        keys.add(key);
        into(key, value);
        left--;
      }
      return keys;
    };
    const batch: Batch = { events: [], sessionUpserts: [], sessionDeletes: [] };
    const event = (_: string, row: EventRow) => void batch.events.push({ ...row });
    this.takenFinished = takeFrom(this.finished, event);
    this.takenInFlight = takeFrom(this.inFlight, event);
    this.takenSessions = takeFrom(
      this.sessions,
      (key, row) => void (row ? batch.sessionUpserts.push(row) : batch.sessionDeletes.push(key)),
    );
    return batch;
  }

  private takeAll(): Batch {
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
    this.takenFinished = new Set(this.finished.keys());
    this.takenInFlight = new Set(this.inFlight.keys());
    this.takenSessions = new Set(this.sessions.keys());
    this.finished = new Map();
    this.inFlight = new Map();
    this.sessions = new Map();
    return batch;
  }

  /** Part of the batch taken is done with (written, or refused and dropped); without a part, all of it. */
  settle(part?: Batch): void {
    if (!part) {
      this.takenFinished = new Set();
      this.takenInFlight = new Set();
      this.takenSessions = new Set();
      this.droppedEvents = new Set();
      this.droppedSessions = new Set();
      return;
    }
    for (const row of part.events) {
      this.takenFinished.delete(row.event_id);
      this.takenInFlight.delete(row.event_id);
      this.droppedEvents.delete(row.event_id);
    }
    for (const key of [...part.sessionUpserts.map((r) => r.session_key), ...part.sessionDeletes]) {
      this.takenSessions.delete(key);
      this.droppedSessions.delete(key);
    }
  }

  /**
   * Part of the batch taken that the database did not take, back in the queue ahead of what was queued since (it is
   * older), except the keys changed since (their newer change stands, as it would have overwritten this one in the
   * database) and those dropped meanwhile. Returns how many of those are lost: finished rows and session changes.
   */
  putBack(part: Batch): number {
    let lost = 0;
    const finished = new Map<string, EventRow>();
    const inFlight = new Map<string, EventRow>();
    for (const row of part.events) {
      const id = row.event_id;
      if (this.takenFinished.delete(id) || this.takenInFlight.delete(id))
        (row.outcome === 'pending' ? inFlight : finished).set(id, row);
      else if (this.droppedEvents.delete(id) && row.outcome !== 'pending') lost++;
    }
    const sessions = new Map<string, SessionRow | null>();
    const sessionBack = (key: string, row: SessionRow | null) => {
      if (this.takenSessions.delete(key)) sessions.set(key, row);
      else if (this.droppedSessions.delete(key)) lost++;
    };
    for (const row of part.sessionUpserts) sessionBack(row.session_key, row);
    for (const key of part.sessionDeletes) sessionBack(key, null);
    this.finished = new Map([...finished, ...this.finished]);
    this.inFlight = new Map([...inFlight, ...this.inFlight]);
    this.sessions = new Map([...sessions, ...this.sessions]);
    return lost;
  }

  /**
   * Drops `count` rows waiting, the oldest finished rows first, and returns how many are lost now. Rows of the
   * commit under way are lost only if it fails (putBack says); rows still pending are never lost by this.
   *
   * Finished rows first: a finished row is what the log keeps for good, so dropping it loses one row, once. A row
   * still pending comes back whole when its event ends (the writer keeps open events' rows), so dropping it only
   * defers it; pending rows and then session changes go only when no finished row is left (a bound below the events
   * in flight). The oldest first, those of the commit under way before those queued since: after an outage the log
   * then holds the most recent stretch, without a gap up to the present, and what waited longest is let go.
   */
  dropOldest(count: number): number {
    let left = count;
    let lost = 0;
    const drop = (keys: Set<string> | Map<string, unknown>, dropped: (key: string) => void) => {
      for (const key of keys.keys()) {
        if (left === 0) return;
        keys.delete(key);
        left--;
        dropped(key);
      }
    };
    drop(this.takenFinished, (key) => this.droppedEvents.add(key));
    drop(this.finished, () => lost++);
    drop(this.takenInFlight, (key) => this.droppedEvents.add(key));
    drop(this.inFlight, () => {});
    drop(this.takenSessions, (key) => this.droppedSessions.add(key));
    drop(this.sessions, () => lost++);
    return lost;
  }
}
