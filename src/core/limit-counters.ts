// What the bounds of L13-L23 have done since start: counted where they act, read by /metrics when scraped.
import type { ByteBoundCounters } from './byte-bounds.js';
import type { ConnectionBound } from './connection-bounds.js';
import type { HandshakeRefusalCode } from './handshake.js';
import type { DeadReason } from './liveness.js';
import type { NotKept } from './streamed-text.js';

/** The bounds on events in flight (L13, L23): the label of bridge_events_refused_total. */
export type InFlightBound = 'app' | 'agent' | 'total' | 'payloads';

/** too_large: the text or the whole frame is over its limit; text_not_kept: empty content after a discarded stream. */
export type ReplyRefusal = 'too_large' | 'text_not_kept';

export interface LimitCounters {
  /** Events refused with TOO_MANY_EVENTS, by the bound that refused them (L13, L23). */
  eventsRefused: Record<InFlightBound, number>;
  /** Events whose kept streamed text was discarded, by why (L14, L15). */
  textDiscarded: Record<NotKept | 'app_gone', number>;
  /** Agent replies refused with REPLY_TOO_LARGE (L14, L16). */
  repliesRefused: Record<ReplyRefusal, number>;
  /** Handshakes refused, by code (W1, L18). */
  handshakesRefused: Record<HandshakeRefusalCode, number>;
  /** Handshakes refused with TOO_MANY_CONNECTIONS, by the bound that refused them (L18). */
  connectionsRefused: Record<ConnectionBound, number>;
  /** Connections closed with SLOW_CONSUMER, by the sum that was over (W17, L19). */
  slowConsumers: ByteBoundCounters['slowConsumers'];
  /** Connections closed with INCOMPLETE_MESSAGE, by the sum that was over, or `timeout` (L20). */
  incompleteMessages: ByteBoundCounters['incompleteMessages'];
  /** Connections closed already and destroyed, still holding the most of a sum over its bound (L19, L20). */
  destroyed: ByteBoundCounters['destroyed'];
  /** Connections closed with HEARTBEAT_TIMEOUT, by why (L7, L22). */
  heartbeatTimeouts: Record<DeadReason, number>;
}

/** The counters the core keeps itself (the byte bounds and heartbeats keep theirs). */
export type CoreCounters = Omit<LimitCounters, keyof ByteBoundCounters | 'heartbeatTimeouts'>;

export function newCoreCounters(): CoreCounters {
  return {
    eventsRefused: { app: 0, agent: 0, total: 0, payloads: 0 },
    textDiscarded: { event_limit: 0, agent_limit: 0, node_limit: 0, app_gone: 0 },
    repliesRefused: { too_large: 0, text_not_kept: 0 },
    handshakesRefused: { UNAUTHORIZED: 0, TOKEN_REVOKED: 0, FORBIDDEN: 0, TOO_MANY_CONNECTIONS: 0 },
    connectionsRefused: { total: 0, address: 0, app: 0 },
  };
}
