// Session mapping (§2.5, H4, T4): the bridge sends `svc:{app_id}:{thread_id}`; the connector keeps one runtime
// session per key, created with a deep copy of the agent's `context`, reused while `now < createdAt + ttl_days`,
// and replaced by a fresh one (empty `data`) at the first event after that. Time comes from the injectable clock.
// Sessions live in memory: a restarted connector starts every conversation afresh.
import type { Clock } from '../../shared/clock.js';
import { DAY_MS } from '../../shared/time.js';

/** Expired sessions are swept at most this often (on the next lookup), so memory stays bounded without a timer. */
const SWEEP_EVERY_MS = 3_600_000;

/** The runtime session an event belongs to; `data` is the handler's to keep conversation state in. */
export interface AgentSession {
  /** The bridge's session key, `svc:{app_id}:{thread_id}`. */
  readonly key: string;
  /** A deep copy of the agent's configured `context`, taken when the session was created. */
  readonly context: Record<string, unknown>;
  readonly createdAt: Date;
  /** createdAt + ttl_days; from then on the next event gets a new session. */
  readonly expiresAt: Date;
  data: Record<string, unknown>;
}

export interface SessionStoreOptions {
  ttlDays: number;
  context?: Record<string, unknown>;
  clock: Clock;
}

export class SessionStore {
  private readonly sessions = new Map<string, AgentSession>();
  private readonly ttlMs: number;
  private lastSweep: number;

  constructor(private readonly options: SessionStoreOptions) {
    if (!(options.ttlDays > 0)) throw new RangeError(`ttlDays must be positive, got ${options.ttlDays}`);
    this.ttlMs = options.ttlDays * DAY_MS;
    this.lastSweep = options.clock.monotonic(); // sweeps are paced on the monotonic clock, expiries are instants
  }

  /** The live session of `key`, or a new one (`created: true`) when there is none or it has expired. */
  acquire(key: string): { session: AgentSession; created: boolean } {
    const now = this.options.clock.now();
    if (this.options.clock.monotonic() - this.lastSweep >= SWEEP_EVERY_MS) this.sweep();
    const existing = this.sessions.get(key);
    if (existing && now < existing.expiresAt.getTime()) return { session: existing, created: false };
    const session: AgentSession = {
      key,
      context: structuredClone(this.options.context ?? {}),
      createdAt: new Date(now),
      expiresAt: new Date(now + this.ttlMs),
      data: {},
    };
    this.sessions.set(key, session);
    return { session, created: true };
  }

  /** The live session of `key` without creating one. */
  get(key: string): AgentSession | undefined {
    const session = this.sessions.get(key);
    return session && this.options.clock.now() < session.expiresAt.getTime() ? session : undefined;
  }

  delete(key: string): boolean {
    return this.sessions.delete(key);
  }

  /** Deletes every expired session; returns how many. */
  sweep(): number {
    const now = this.options.clock.now();
    this.lastSweep = this.options.clock.monotonic();
    let deleted = 0;
    for (const [key, session] of this.sessions) {
      if (now >= session.expiresAt.getTime()) {
        this.sessions.delete(key);
        deleted++;
      }
    }
    return deleted;
  }

  /** Sessions held, expired ones not yet swept included. */
  get size(): number {
    return this.sessions.size;
  }
}
