// One debug line per step of every event (accepted, delivered, first fragment, ended, or rejected), with the
// milliseconds since the app's frame arrived, so that an operator at LOG_LEVEL=debug can follow one event through
// the bridge by its event_id, on each node it crosses. Ids, codes, sizes and times only: never a token, a payload or a
// thread id (the app's own words may be in it). Made only at debug level: at info it would cost a map entry and a
// line per event for nothing.
import type { BridgeObserver } from '../core/observer.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';

export function eventLines(log: Logger, clock: Clock): BridgeObserver {
  /** When each event held here was received (epoch ms), until it ends: as many as events in flight (L23). */
  const receivedAt = new Map<string, number>();
  const since = (at: number | undefined) => (at === undefined ? undefined : Math.max(0, clock.now() - at));
  return {
    eventRejected(e, code) {
      log.debug({ app_id: e.app_id, agent_id: e.agent_id, code, ms: since(e.received_at) }, 'event rejected');
    },
    eventAccepted(e) {
      receivedAt.set(e.event_id, e.received_at);
      const fields = { event_id: e.event_id, app_id: e.app_id, agent_id: e.agent_id, payload_bytes: e.payload_bytes };
      log.debug({ ...fields, ms: since(e.received_at) }, 'event accepted');
    },
    eventDelivered(d) {
      // On the agent's node when it is another: the home's clock is not this one, so no time is given there.
      const ms = since(receivedAt.get(d.event_id));
      const where = ms === undefined ? { from_other_node: true } : { ms };
      log.debug({ event_id: d.event_id, agent_id: d.agent_id, ...where }, 'event delivered to its agent');
    },
    eventFirstFragment(eventId, ms) {
      log.debug({ event_id: eventId, ms }, 'event: first fragment forwarded');
    },
    eventEnded(e) {
      receivedAt.delete(e.event_id);
      const fields = { event_id: e.event_id, outcome: e.outcome, code: e.code, tokens_used: e.tokens_used };
      log.debug({ ...fields, ms: e.latency_ms }, 'event ended');
    },
    sessionOpened() {},
    sessionEvicted() {},
  };
}
