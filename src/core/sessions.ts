// Sessions (§2.5, §3; H4): one per stored session key, created by its first event, reused until its agent's TTL
// has passed since its creation, then replaced by a new one on the next event. In memory for the per-event path;
// the store persists the changes it is told about.
import type { Session } from '../../generated/index.js';

export type SessionRecord = Omit<Session, 'created_at' | 'expires_at'> & { created_at: number; expires_at: number };

export type SessionChange = 'created' | 'recreated' | 'reused';

export class SessionTable {
  private readonly byKey = new Map<string, SessionRecord>();

  load(records: Iterable<SessionRecord>): void {
    for (const r of records) this.byKey.set(r.session_key, r);
  }

  /** The live session of `key` at `now`, made when there is none or the old one has expired. */
  open(key: string, agentId: string, appId: string, threadId: string, ttlMs: number, now: number): { session: SessionRecord; change: SessionChange } {
    const current = this.byKey.get(key);
    if (current && current.expires_at > now) return { session: current, change: 'reused' };
    const session: SessionRecord = { session_key: key, agent_id: agentId, app_id: appId, thread_id: threadId, created_at: now, expires_at: now + ttlMs };
    this.byKey.set(key, session);
    return { session, change: current ? 'recreated' : 'created' };
  }

  /** Removes and returns every session expired at `now`. */
  sweep(now: number): SessionRecord[] {
    return this.remove((s) => s.expires_at <= now);
  }

  /** Removes and returns every session that `match` selects. */
  remove(match: (session: SessionRecord) => boolean): SessionRecord[] {
    const removed: SessionRecord[] = [];
    for (const s of this.byKey.values()) if (match(s)) removed.push(s);
    for (const s of removed) this.byKey.delete(s.session_key);
    return removed;
  }

  /** Live sessions, sorted by key. */
  list(now: number, filter: { agent_id?: string; app_id?: string } = {}): SessionRecord[] {
    return [...this.byKey.values()]
      .filter((s) => s.expires_at > now && (!filter.agent_id || s.agent_id === filter.agent_id) && (!filter.app_id || s.app_id === filter.app_id))
      .sort((a, b) => (a.session_key < b.session_key ? -1 : a.session_key > b.session_key ? 1 : 0));
  }

  /**
   * At most `limit` live sessions whose key sorts after `after`, and the cursor of the next page (null on the
   * last): a listing of any size answers in bounded pages.
   */
  page(now: number, filter: { agent_id?: string; app_id?: string; after?: string; limit: number }): { sessions: SessionRecord[]; next_after: string | null } {
    const after = filter.after;
    const rest = this.list(now, filter).filter((s) => after === undefined || s.session_key > after);
    const sessions = rest.slice(0, filter.limit);
    return { sessions, next_after: rest.length > filter.limit ? sessions[sessions.length - 1]!.session_key : null };
  }

  get size(): number {
    return this.byKey.size;
  }
}
