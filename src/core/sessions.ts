// Sessions (§2.5, §3; H4): one per stored session key, created by its first event, reused until its agent's TTL
// has passed since its creation, then replaced by a new one on the next event. In memory for the per-event path;
// the store persists the changes it is told about. Each app keeps at most `maxPerApp` of them (L17): one more
// evicts the app's least recently used session, so an app inventing thread_ids costs only its own oldest records;
// and the node at most `max` (L23): one more evicts the node's least recently used one.
import { LIMITS, type Session } from '../../generated/index.js';
import { byCodeUnits, pageAfter } from '../shared/paging.js';
import type { EpochMs } from './records.js';

/** A session as the core holds it, and as the store's `sessions` row is: the wire's Session in epoch ms. */
export type SessionRecord = EpochMs<Session, 'created_at' | 'expires_at'>;

export type SessionChange = 'created' | 'recreated' | 'reused';

export interface OpenedSession {
  session: SessionRecord;
  change: SessionChange;
  /** The app's least recently used session, removed to stay within maxPerApp (L17), or the node's, within max (L23). */
  evicted?: SessionRecord;
}

export class SessionTable {
  /** Every session, from least to most recently used. */
  private readonly byKey = new Map<string, SessionRecord>();
  /** Per app, its sessions from least to most recently used (a Map keeps insertion order; use re-inserts). */
  private readonly byApp = new Map<string, Map<string, SessionRecord>>();

  constructor(
    private readonly maxPerApp: number = LIMITS.sessionsPerAppMax,
    private readonly max: number = LIMITS.sessionsMax,
  ) {}

  /**
   * Sessions read back at start, oldest first; those over an app's bound (lowered since they were stored) are
   * evicted and returned, for the caller to delete.
   */
  load(records: Iterable<SessionRecord>): SessionRecord[] {
    const evicted: SessionRecord[] = [];
    for (const r of [...records].sort((a, b) => a.created_at - b.created_at)) {
      const over = this.put(r);
      if (over) evicted.push(over);
    }
    return evicted;
  }

  /** The live session of `key` at `now`, made when there is none or the old one has expired. */
  open(key: string, agentId: string, appId: string, threadId: string, ttlMs: number, now: number): OpenedSession {
    const current = this.byKey.get(key);
    if (current && current.expires_at > now) {
      this.touch(current);
      return { session: current, change: 'reused' };
    }
    const session: SessionRecord = {
      session_key: key,
      agent_id: agentId,
      app_id: appId,
      thread_id: threadId,
      created_at: now,
      expires_at: now + ttlMs,
    };
    const evicted = this.put(session);
    return { session, change: current ? 'recreated' : 'created', ...(evicted ? { evicted } : {}) };
  }

  /** Removes and returns every session expired at `now`. */
  sweep(now: number): SessionRecord[] {
    return this.remove((s) => s.expires_at <= now);
  }

  /** Removes and returns every session that `match` selects. */
  remove(match: (session: SessionRecord) => boolean): SessionRecord[] {
    const removed: SessionRecord[] = [];
    for (const s of this.byKey.values()) if (match(s)) removed.push(s);
    for (const s of removed) this.delete(s);
    return removed;
  }

  /** Live sessions, sorted by key. */
  list(now: number, filter: { agent_id?: string; app_id?: string } = {}): SessionRecord[] {
    return [...this.byKey.values()]
      .filter(
        (s) =>
          s.expires_at > now &&
          (!filter.agent_id || s.agent_id === filter.agent_id) &&
          (!filter.app_id || s.app_id === filter.app_id),
      )
      .sort(byKey);
  }

  /**
   * At most `limit` live sessions whose key sorts after `after`, and the cursor of the next page (null on the
   * last): a listing of any size answers in bounded pages.
   */
  page(now: number, filter: { agent_id?: string; app_id?: string; after?: string; limit: number }): SessionPage {
    return pageOf(this.list(now, filter), filter.after, filter.limit);
  }

  get size(): number {
    return this.byKey.size;
  }

  /**
   * Adds or replaces a session as the most recent; returns the app's oldest when that is now one too many, else the
   * node's oldest when that is (one session added, so one eviction at most restores both bounds).
   */
  private put(session: SessionRecord): SessionRecord | undefined {
    const previous = this.byKey.get(session.session_key);
    if (previous) this.delete(previous);
    this.byKey.set(session.session_key, session);
    let ofApp = this.byApp.get(session.app_id);
    if (!ofApp) this.byApp.set(session.app_id, (ofApp = new Map()));
    ofApp.set(session.session_key, session);
    const oldest =
      ofApp.size > this.maxPerApp
        ? ofApp.values().next().value!
        : this.byKey.size > this.max
          ? this.byKey.values().next().value!
          : undefined;
    if (oldest) this.delete(oldest);
    return oldest;
  }

  private touch(session: SessionRecord): void {
    this.byKey.delete(session.session_key);
    this.byKey.set(session.session_key, session);
    const ofApp = this.byApp.get(session.app_id)!;
    ofApp.delete(session.session_key);
    ofApp.set(session.session_key, session);
  }

  private delete(session: SessionRecord): void {
    this.byKey.delete(session.session_key);
    const ofApp = this.byApp.get(session.app_id);
    ofApp?.delete(session.session_key);
    if (ofApp?.size === 0) this.byApp.delete(session.app_id);
  }
}

export interface SessionPage {
  sessions: SessionRecord[];
  next_after: string | null;
}

const byKey = (a: SessionRecord, b: SessionRecord) => byCodeUnits(a.session_key, b.session_key);

/** A page of sessions sorted by key: at most `limit` after the cursor `after`, and the next cursor (null: the last). */
export function pageOf(sorted: SessionRecord[], after: string | undefined, limit: number): SessionPage {
  const { items, next_after } = pageAfter(sorted, (s) => s.session_key, after, limit);
  return { sessions: items, next_after };
}

/**
 * Several nodes' sessions as one list sorted by key: where two nodes hold the same key (an app's instances on
 * both), the one created last is the session (O14).
 */
export function mergeSessions(lists: SessionRecord[][]): SessionRecord[] {
  const newest = new Map<string, SessionRecord>();
  for (const list of lists) {
    for (const s of list) {
      const kept = newest.get(s.session_key);
      if (!kept || s.created_at > kept.created_at) newest.set(s.session_key, s);
    }
  }
  return [...newest.values()].sort(byKey);
}
