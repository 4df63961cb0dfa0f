// What a bridge core is made with, and the defaults (the spec's x-limits) for what is left out.
import { LIMITS } from '../../generated/index.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { silentLogger, type Logger } from '../shared/logger.js';
import type { ByteBoundsOptions } from './byte-bounds.js';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from './connection-bounds.js';
import type { Directory } from './directory.js';
import type { Engine } from './engine.js';
import type { EventTableLimits } from './event-table.js';
import { DEFAULT_FAIR_SHARES, type FairShareLimits } from './fair-share.js';
import type { SharedBounds } from './held-bytes.js';
import type { LivenessOptions } from './liveness.js';
import { MemoryEngine } from './memory-engine.js';
import { noObserver, type BridgeObserver } from './observer.js';
import { RateLimiter, type EventRateLimit } from './rate-limit.js';
import type { ResumeBounds } from './resume-store.js';
import { SessionTable } from './sessions.js';

export interface BridgeOptions {
  directory: Directory;
  /** Where connections are and how frames cross nodes (default: one node's, in memory). */
  engine?: Engine;
  clock?: Clock;
  log?: Logger;
  /** AGENT_TIMEOUT after this long without a reply (default LIMITS.agentTimeoutMs). */
  agentTimeoutMs?: number;
  /** Events of a disconnected agent wait this long for it to come back (default LIMITS.agentReconnectGraceMs). */
  agentReconnectGraceMs?: number;
  /** A connection on which nothing arrives for this long is closed (default LIMITS.idleCloseMs). */
  idleCloseMs?: number;
  /** Per-app event rate limit (default: off); on several nodes an answer may take a round trip (EventRateLimit). */
  rateLimiter?: EventRateLimit;
  /** The live sessions (default: a fresh table). */
  sessions?: SessionTable;
  /** Told about every event's start and end and every session opened (event log, metrics, persistence). */
  observer?: BridgeObserver;
  /**
   * The trace context (W3C `traceparent`) of an event told accepted to the observer, sent with it to its agent's node
   * (default: none: events are not traced).
   */
  traceparentOf?: (eventId: string) => string | undefined;
  /** Events in flight one app may have, all its connections together (default LIMITS.eventsInFlightPerAppMax). */
  maxEventsInFlightPerApp?: number;
  /** Events in flight one agent may have (default LIMITS.eventsInFlightPerAgentMax). */
  maxEventsInFlightPerAgent?: number;
  /** Events in flight on this node, every app's together (default LIMITS.eventsInFlightMax; L23). */
  maxEventsInFlight?: number;
  /** Bytes of payloads this node holds for its events in flight (default LIMITS.eventPayloadsMaxBytes; L23). */
  eventPayloadsMaxBytes?: number;
  /** Streamed text kept per event for an empty-content reply (default LIMITS.streamedTextMaxBytes). */
  streamedTextMaxBytes?: number;
  /** Memory the kept texts of one agent's events may hold together (default LIMITS.streamedTextPerAgentMaxBytes). */
  streamedTextPerAgentMaxBytes?: number;
  /** Memory the kept texts of all this node's events may hold together (default LIMITS.streamedTextTotalMaxBytes; L23). */
  streamedTextTotalMaxBytes?: number;
  /** Bounds on live connections (L18; default from LIMITS). */
  connectionLimits?: ConnectionLimits;
  /** Unread bytes a connection may have queued before it is closed with SLOW_CONSUMER (W17; default LIMITS). */
  sendBufferMaxBytes?: number;
  /** Unread bytes of all the connections of an app, of an agent, of the node (L19; default LIMITS). */
  sendBufferBounds?: Partial<SharedBounds>;
  /** Bytes of messages received in part, the same sums (L20; default LIMITS). */
  partialMessageBounds?: Partial<SharedBounds>;
  /** How long a message may take to arrive whole (L20; default LIMITS.partialMessageTimeoutMs). */
  partialMessageTimeoutMs?: number;
  /** A WebSocket ping to a connection silent this long, 0 never (L22; default LIMITS.wsPingAfterMs). */
  wsPingAfterMs?: number;
  /** How long the pong may take (L22; default LIMITS.wsPongTimeoutMs). */
  wsPongTimeoutMs?: number;
  /** How long a resumable event is kept after its end (R7; default LIMITS.resumeWindowMs). */
  resumeWindowMs?: number;
  /** Bytes kept for resumes of one app's events (R7; default LIMITS.resumeBufferPerAppMaxBytes). */
  resumeBufferPerAppMaxBytes?: number;
  /** Bytes kept for resumes on this node (R7; default LIMITS.resumeBufferMaxBytes). */
  resumeBufferMaxBytes?: number;
  /** Each organization's share of fragments, discovers, resumes and replayed bytes (F3, R10; default from LIMITS). */
  fairShares?: FairShareLimits;
}

/** Every option with its default filled in, grouped by the part that takes it. */
export interface BridgeSettings {
  directory: Directory;
  engine: Engine;
  clock: Clock;
  log: Logger;
  agentTimeoutMs: number;
  graceMs: number;
  rateLimiter: EventRateLimit;
  sessions: SessionTable;
  observer: BridgeObserver;
  traceparentOf: (eventId: string) => string | undefined;
  events: EventTableLimits;
  connectionLimits: ConnectionLimits;
  byteBounds: Omit<ByteBoundsOptions, 'clock' | 'log' | 'refuse'>;
  liveness: Omit<LivenessOptions, 'clock' | 'log'>;
  resumeBounds: ResumeBounds;
  fairShares: FairShareLimits;
}

const untraced = () => undefined;

export function settingsOf(o: BridgeOptions): BridgeSettings {
  const textMaxBytes = o.streamedTextMaxBytes ?? LIMITS.streamedTextMaxBytes;
  return {
    directory: o.directory,
    engine: o.engine ?? new MemoryEngine(),
    clock: o.clock ?? systemClock,
    log: o.log ?? silentLogger,
    agentTimeoutMs: o.agentTimeoutMs ?? LIMITS.agentTimeoutMs,
    graceMs: o.agentReconnectGraceMs ?? LIMITS.agentReconnectGraceMs,
    rateLimiter: o.rateLimiter ?? new RateLimiter(0, 0),
    sessions: o.sessions ?? new SessionTable(),
    observer: o.observer ?? noObserver,
    traceparentOf: o.traceparentOf ?? untraced,
    events: {
      perApp: o.maxEventsInFlightPerApp ?? LIMITS.eventsInFlightPerAppMax,
      perAgent: o.maxEventsInFlightPerAgent ?? LIMITS.eventsInFlightPerAgentMax,
      total: o.maxEventsInFlight ?? LIMITS.eventsInFlightMax,
      payloadsMaxBytes: o.eventPayloadsMaxBytes ?? LIMITS.eventPayloadsMaxBytes,
      textMaxBytes,
      textPerAgentMaxBytes: o.streamedTextPerAgentMaxBytes ?? LIMITS.streamedTextPerAgentMaxBytes,
      textTotalMaxBytes: o.streamedTextTotalMaxBytes ?? LIMITS.streamedTextTotalMaxBytes,
    },
    connectionLimits: o.connectionLimits ?? DEFAULT_CONNECTION_LIMITS,
    byteBounds: byteBoundsOf(o),
    liveness: {
      idleCloseMs: o.idleCloseMs ?? LIMITS.idleCloseMs,
      pingAfterMs: o.wsPingAfterMs ?? LIMITS.wsPingAfterMs,
      pongTimeoutMs: o.wsPongTimeoutMs ?? LIMITS.wsPongTimeoutMs,
    },
    resumeBounds: {
      windowMs: o.resumeWindowMs ?? LIMITS.resumeWindowMs,
      eventMaxBytes: textMaxBytes,
      appMaxBytes: o.resumeBufferPerAppMaxBytes ?? LIMITS.resumeBufferPerAppMaxBytes,
      nodeMaxBytes: o.resumeBufferMaxBytes ?? LIMITS.resumeBufferMaxBytes,
    },
    fairShares: o.fairShares ?? DEFAULT_FAIR_SHARES,
  };
}

function byteBoundsOf(o: BridgeOptions): BridgeSettings['byteBounds'] {
  return {
    sendBufferMaxBytes: o.sendBufferMaxBytes ?? LIMITS.sendBufferMaxBytes,
    send: {
      app: LIMITS.sendBufferPerAppMaxBytes,
      agent: LIMITS.sendBufferPerAgentMaxBytes,
      total: LIMITS.sendBufferTotalMaxBytes,
      ...o.sendBufferBounds,
    },
    partial: {
      app: LIMITS.partialMessagesPerAppMaxBytes,
      agent: LIMITS.partialMessagesPerAgentMaxBytes,
      total: LIMITS.partialMessagesTotalMaxBytes,
      ...o.partialMessageBounds,
    },
    partialTimeoutMs: o.partialMessageTimeoutMs ?? LIMITS.partialMessageTimeoutMs,
  };
}
