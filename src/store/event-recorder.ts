// The event log's writer side: every start and end of an app event the rate limit let through, and every session
// opened or evicted, queued for the next group commit. Never the payload.
import type { BridgeObserver } from '../core/observer.js';
import type { WriteBehind } from './write-behind.js';

export function eventRecorder(writer: WriteBehind): BridgeObserver {
  return {
    eventRejected(e, code, admitted) {
      // Rows only for what the rate limit let through: a flood of bad or excess frames is counted, not logged (O1).
      if (!admitted) return;
      writer.insertEvent({
        ...e,
        status: 'rejected',
        outcome: 'rejected',
        code,
        tokens_used: null,
        completed_at: e.received_at,
        latency_ms: 0,
      });
    },
    eventAccepted(e) {
      writer.insertEvent({
        ...e,
        status: 'delivered',
        outcome: 'pending',
        code: null,
        tokens_used: null,
        completed_at: null,
        latency_ms: null,
      });
    },
    eventEnded({ event_id, ...end }) {
      writer.updateEvent(event_id, end);
    },
    sessionOpened(session) {
      writer.upsertSession(session);
    },
    sessionEvicted(session) {
      writer.deleteSessions([session.session_key]);
    },
  };
}
