// What the core tells the rest of the server about events and sessions (event log, metrics, persistence),
// without knowing who listens. Every call is synchronous and must not do I/O on the caller's time.
import type { ErrorCode, EventOutcome } from '../../generated/index.js';
import type { SessionChange, SessionRecord } from './sessions.js';

export interface EventStart {
  event_id: string;
  app_id: string;
  /** As the app sent it (may be invalid for rejected events). */
  agent_id: string;
  thread_id: string | null;
  session_key: string | null;
  payload_bytes: number;
  received_at: number;
}

export interface EventEnd {
  event_id: string;
  outcome: Exclude<EventOutcome, 'pending' | 'rejected' | 'lost'>;
  code: ErrorCode | null;
  tokens_used: number | null;
  completed_at: number;
  latency_ms: number;
}

export interface BridgeObserver {
  /**
   * An app event answered with an error instead of `accepted`. `admitted`: the rate limit let it through (so a
   * client can produce such events only at its rate); false for those refused before it or by it (O1).
   */
  eventRejected(event: EventStart, code: ErrorCode, admitted: boolean): void;
  eventAccepted(event: EventStart): void;
  eventEnded(event: EventEnd): void;
  sessionOpened(session: SessionRecord, change: SessionChange): void;
  /** A session removed before its expiry to keep its app within sessionsPerAppMax (L17). */
  sessionEvicted(session: SessionRecord): void;
}

const nothing = () => {};
export const noObserver: BridgeObserver = {
  eventRejected: nothing,
  eventAccepted: nothing,
  eventEnded: nothing,
  sessionOpened: nothing,
  sessionEvicted: nothing,
};

/** One observer that tells several, in order. */
export function fanOut(...observers: BridgeObserver[]): BridgeObserver {
  return {
    eventRejected: (e, code, admitted) => observers.forEach((o) => o.eventRejected(e, code, admitted)),
    eventAccepted: (e) => observers.forEach((o) => o.eventAccepted(e)),
    eventEnded: (e) => observers.forEach((o) => o.eventEnded(e)),
    sessionOpened: (s, change) => observers.forEach((o) => o.sessionOpened(s, change)),
    sessionEvicted: (s) => observers.forEach((o) => o.sessionEvicted(s)),
  };
}
