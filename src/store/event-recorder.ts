// The event log's writer side: every start and end of an app event the rate limit let through, and every session
// opened or evicted, queued for the next group commit. Never the payload.
import type { BridgeObserver, EventStart } from '../core/observer.js';
import type { EventRow, WriteBehind } from './write-behind.js';

/**
 * The row of an event as it starts, field by field: a spread of the start cost a slow object clone per event (a
 * tenth of the event log's share of the main thread under load), and a field missing here does not compile.
 */
function startRow(e: EventStart, outcome: 'pending' | 'rejected', code: EventRow['code']): EventRow {
  const rejected = outcome === 'rejected';
  return {
    event_id: e.event_id,
    app_id: e.app_id,
    agent_id: e.agent_id,
    thread_id: e.thread_id,
    session_key: e.session_key,
    status: rejected ? 'rejected' : 'delivered',
    outcome,
    code,
    payload_bytes: e.payload_bytes,
    tokens_used: null,
    received_at: e.received_at,
    completed_at: rejected ? e.received_at : null,
    latency_ms: rejected ? 0 : null,
  };
}

export function eventRecorder(writer: WriteBehind): BridgeObserver {
  return {
    eventRejected(e, code, admitted) {
      // Rows only for what the rate limit let through: a flood of bad or excess frames is counted, not logged (O1).
      if (!admitted) return;
      writer.insertEvent(startRow(e, 'rejected', code));
    },
    eventAccepted(e) {
      writer.insertEvent(startRow(e, 'pending', null));
    },
    eventDelivered() {},
    eventFirstFragment() {},
    eventEnded(end) {
      writer.updateEvent(end.event_id, end); // its event_id is the row's: assigned over it unchanged
    },
    sessionOpened(session) {
      writer.upsertSession(session);
    },
    sessionEvicted(session) {
      writer.deleteSessions([session.session_key]);
    },
  };
}
