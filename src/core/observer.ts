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

/** An event handed to its agent's connection on this node: the event's home, or the agent's node when another. */
export interface EventDelivered {
  event_id: string;
  agent_id: string;
  /** The trace context its home node sent with it (W3C `traceparent`), when the home traces and is another node. */
  traceparent: string | undefined;
}

export interface BridgeObserver {
  /**
   * An app event answered with an error instead of `accepted`. `admitted`: the rate limit let it through (so a
   * client can produce such events only at its rate); false for those refused before it or by it (O1).
   */
  eventRejected(event: EventStart, code: ErrorCode, admitted: boolean): void;
  /** Told before the event goes to its agent, so that what is told of its delivery comes after. */
  eventAccepted(event: EventStart): void;
  eventDelivered(delivered: EventDelivered): void;
  /** The first fragment of an event held here was forwarded toward its app, `ms` after the event was received. */
  eventFirstFragment(eventId: string, ms: number): void;
  eventEnded(event: EventEnd): void;
  sessionOpened(session: SessionRecord, change: SessionChange): void;
  /** A session removed before its expiry to keep its app within sessionsPerAppMax (L17), or the node within sessionsMax (L23). */
  sessionEvicted(session: SessionRecord): void;
}

const nothing = () => {};
export const noObserver: BridgeObserver = {
  eventRejected: nothing,
  eventAccepted: nothing,
  eventDelivered: nothing,
  eventFirstFragment: nothing,
  eventEnded: nothing,
  sessionOpened: nothing,
  sessionEvicted: nothing,
};

/** One observer that tells several, in order. */
export function fanOut(...observers: BridgeObserver[]): BridgeObserver {
  return {
    eventRejected: (e, code, admitted) => observers.forEach((o) => o.eventRejected(e, code, admitted)),
    eventAccepted: (e) => observers.forEach((o) => o.eventAccepted(e)),
    eventDelivered: (d) => observers.forEach((o) => o.eventDelivered(d)),
    eventFirstFragment: (id, ms) => observers.forEach((o) => o.eventFirstFragment(id, ms)),
    eventEnded: (e) => observers.forEach((o) => o.eventEnded(e)),
    sessionOpened: (s, change) => observers.forEach((o) => o.sessionOpened(s, change)),
    sessionEvicted: (s) => observers.forEach((o) => o.sessionEvicted(s)),
  };
}
