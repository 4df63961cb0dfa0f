// What the core tells the rest of the server about events and sessions (event log, metrics, persistence),
// without knowing who listens. Every call is synchronous and must not do I/O on the caller's time.
import type { ErrorCode, EventLogEntry } from '../../generated/index.js';
import type { EpochMs } from './records.js';
import type { SessionChange, SessionRecord } from './sessions.js';

/**
 * An event as the event log records it: the wire's EventLogEntry with its times in epoch ms. The store writes it
 * as the `events` row; the admin API reads it back as an EventLogEntry.
 */
export type EventRecord = EpochMs<EventLogEntry, 'received_at' | 'completed_at'>;

/** What is known of an event when it is received: `agent_id` as the app sent it (may be invalid when rejected). */
export type EventStart = Pick<
  EventRecord,
  'event_id' | 'app_id' | 'agent_id' | 'thread_id' | 'session_key' | 'payload_bytes' | 'received_at'
>;

/** How an accepted event ended: a final outcome, so its completion time and latency are known. */
export type EventEnd = Pick<EventRecord, 'event_id' | 'code' | 'tokens_used'> & {
  outcome: Exclude<EventRecord['outcome'], 'pending' | 'rejected' | 'lost'>;
  completed_at: NonNullable<EventRecord['completed_at']>;
  latency_ms: NonNullable<EventRecord['latency_ms']>;
};

export interface BridgeObserver {
  /**
   * An app event answered with an error instead of `accepted`. `admitted`: the rate limit let it through (so a
   * client can produce such events only at its rate); false for those refused before it or by it (O1).
   */
  eventRejected(event: EventStart, code: ErrorCode, admitted: boolean): void;
  eventAccepted(event: EventStart): void;
  eventEnded(event: EventEnd): void;
  sessionOpened(session: SessionRecord, change: SessionChange): void;
  /** A session removed before its expiry to keep its app within sessionsPerAppMax (L17), or the node within sessionsMax (L23). */
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
