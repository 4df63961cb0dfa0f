// An app's event, from its frame to `accepted` or its one error (W7): the payload's size, the app's rate limit (a
// round trip on several nodes), the agent's registration and permission, whether it is connected anywhere, and the
// bounds on events in flight (L13, L23); then the event is filed, accepted and sent on to its agent.
import { LIMITS, type ErrorCode, type EventMessage } from '../../generated/index.js';
import type { Clock } from '../shared/clock.js';
import { errorText } from '../shared/error-text.js';
import { DAY_MS } from '../shared/time.js';
import { BurstLog, LOG_WINDOW_MS } from './burst-log.js';
import type { Logger } from '../shared/logger.js';
import { compactJson } from './compact-json.js';
import type { AgentRecord, AppRecord, Directory } from './directory.js';
import type { Delivery, Presence, Connection, SharedRateLimits, Taken } from './engine.js';
import type { Endings } from './endings.js';
import type { EventTable } from './event-table.js';
import { payloadHeldBytes } from './event-in-flight.js';
import * as frames from './frames.js';
import { utf8Length } from './frames.js';
import type { CoreCounters } from './limit-counters.js';
import type { BridgeObserver, EventStart } from './observer.js';
import type { EventRateLimit } from './rate-limit.js';
import type { ResumeStore } from './resume-store.js';
import { newResumeToken } from './resume.js';
import { agentSessionKey, storedSessionKey } from './session-keys.js';
import type { SessionRecord, SessionTable } from './sessions.js';

export interface AdmissionDeps {
  directory: Directory;
  engine: Presence & Delivery & Pick<SharedRateLimits, 'takeForEvent'>;
  table: EventTable;
  endings: Endings;
  rateLimiter: EventRateLimit;
  sessions: SessionTable;
  resumes: ResumeStore;
  observer: BridgeObserver;
  clock: Clock;
  log: Logger;
  counters: CoreCounters;
  newEventId: () => string;
  /** The trace context to send with an event to its agent's node, once the observer was told it was accepted. */
  traceparentOf(eventId: string): string | undefined;
  agentTimeoutMs: number;
  /** Whether `conn` is still a live connection of this node (an answer that took a round trip may find it gone). */
  isLive(conn: Connection): boolean;
  /** Whether `conn` was opened with ?resume=1 (R1). */
  isResumable(conn: Connection): boolean;
}

type Start = Omit<EventStart, 'event_id'>;

/** An event past its frame's checks, on its way through admission. */
interface Candidate {
  conn: Connection;
  app: AppRecord;
  message: EventMessage;
  payloadJson: string;
  start: Start;
  startedAt: number;
}

export class Admission {
  private readonly evictedLog: BurstLog<string>;

  constructor(private readonly d: AdmissionDeps) {
    this.evictedLog = new BurstLog<string>({
      clock: d.clock,
      windowMs: LOG_WINDOW_MS,
      report: (byApp, evicted) =>
        d.log.info(
          { evicted, apps: Object.fromEntries(byApp) },
          `sessions evicted (apps over their session bound): ${evicted}`,
        ),
    });
  }

  /**
   * Returns a promise when the rate limit's answer takes a round trip (on several nodes, the same one also finds
   * the agent, O20): the connection's next frames wait for it.
   */
  event(conn: Connection, app: AppRecord, message: EventMessage): Promise<void> | void {
    const { clock, rateLimiter, engine } = this.d;
    const startedAt = clock.monotonic();
    const payloadJson = compactJson(message.payload);
    const size = utf8Length(payloadJson);
    const start: Start = {
      app_id: app.app_id,
      agent_id: message.agent_id,
      thread_id: message.thread_id,
      session_key: null,
      payload_bytes: size,
      received_at: clock.now(),
    };
    if (size > LIMITS.payloadMaxBytes) {
      const error = errorText('PAYLOAD_TOO_LARGE', 'too_large', { bytes: size, limit: LIMITS.payloadMaxBytes });
      return this.reject(conn, 'PAYLOAD_TOO_LARGE', error, start);
    }
    const candidate: Candidate = { conn, app, message, payloadJson, start, startedAt };
    const taken = engine.takeForEvent(rateLimiter, app.app_id, message.agent_id, startedAt);
    if (!(taken instanceof Promise)) return this.admit(candidate, taken);
    // Closed meanwhile: nobody to answer.
    return taken.then((t) => (this.d.isLive(conn) ? this.admit(candidate, t) : undefined));
  }

  /** An event refused with `code`: one error to the app (with a fresh event id), and the observer told. */
  reject(
    conn: Connection,
    code: ErrorCode,
    error: string,
    start: Start,
    extra: { agentId?: string | undefined; metadata?: { retry_after_seconds: number }; admitted?: boolean } = {
      agentId: start.agent_id,
    },
  ): void {
    const event_id = this.d.newEventId();
    const { agentId, metadata } = extra;
    conn.send(
      frames.appError(code, error, {
        event_id,
        ...(agentId ? { agent_id: agentId } : {}),
        ...(metadata ? { metadata } : {}),
      }),
    );
    this.d.observer.eventRejected({ event_id, ...start }, code, extra.admitted ?? false);
  }

  stop(): void {
    this.evictedLog.stop();
  }

  private admit(c: Candidate, { wait, locate }: Taken): Promise<void> | void {
    const { directory } = this.d;
    const { app, start } = c;
    const agentId = c.message.agent_id;
    if (wait > 0) {
      const retry = Math.ceil(wait * 1000) / 1000;
      const error = errorText('RATE_LIMIT_EXCEEDED', 'too_fast', { app_id: app.app_id, seconds: retry });
      return this.reject(c.conn, 'RATE_LIMIT_EXCEEDED', error, start, {
        agentId,
        metadata: { retry_after_seconds: retry },
      });
    }
    const agent = directory.agentFor(app, agentId);
    const admitted = { agentId, admitted: true };
    if (!agent) {
      const error = errorText('AGENT_NOT_FOUND', 'unknown', { agent_id: agentId });
      return this.reject(c.conn, 'AGENT_NOT_FOUND', error, start, admitted);
    }
    if (!directory.mayUse(app, agent)) {
      const error = errorText('PERMISSION_DENIED', 'not_allowed', { app_id: app.app_id, agent_id: agentId });
      return this.reject(c.conn, 'PERMISSION_DENIED', error, start, admitted);
    }
    const located = locate();
    if (typeof located === 'boolean') return this.deliverOrOffline(c, agent, located);
    return located.then((online) => (this.d.isLive(c.conn) ? this.deliverOrOffline(c, agent, online) : undefined));
  }

  private deliverOrOffline(c: Candidate, agent: AgentRecord, online: boolean): void {
    if (online) return this.deliver(c, agent);
    const agentId = c.message.agent_id;
    const error = errorText('AGENT_OFFLINE', 'not_connected', { agent_id: agentId });
    this.reject(c.conn, 'AGENT_OFFLINE', error, c.start, { agentId, admitted: true });
  }

  private deliver(c: Candidate, agent: AgentRecord): void {
    const { table, engine, clock, sessions, observer } = this.d;
    const { conn, app, start } = c;
    const { agent_id: agentId, thread_id: threadId } = c.message;
    const tooMany = table.overBound(app.app_id, agentId, payloadHeldBytes(c.payloadJson, start.payload_bytes));
    if (tooMany) {
      this.d.counters.eventsRefused[tooMany.bound]++;
      return this.reject(conn, 'TOO_MANY_EVENTS', tooMany.error, start, { agentId, admitted: true });
    }
    const eventId = this.d.newEventId();
    const sessionKey = storedSessionKey(agentId, app.app_id, threadId);
    const resumeToken = this.d.isResumable(conn) ? newResumeToken() : undefined;
    const ev = table.add({
      eventId,
      app,
      appConn: conn,
      agentId,
      threadId,
      sessionKey,
      payloadJson: c.payloadJson,
      payloadBytes: start.payload_bytes,
      receivedAt: start.received_at,
      startedAt: c.startedAt,
      kept: resumeToken && this.d.resumes.open(eventId, app.app_id, agentId, resumeToken.hash),
    });
    ev.startTimer(clock, this.d.agentTimeoutMs, () => this.timedOut(eventId));

    conn.send(frames.accepted(eventId, agentId, sessionKey, resumeToken?.token));
    const ttlMs = agent.ttl_days * DAY_MS;
    const opened = sessions.open(sessionKey, agentId, app.app_id, threadId, ttlMs, start.received_at);
    if (opened.evicted) this.evicted(opened.evicted);
    if (opened.change !== 'reused') observer.sessionOpened(opened.session, opened.change);
    // Field by field, not a spread of `start`: a slow object clone per event otherwise.
    observer.eventAccepted({
      event_id: eventId,
      app_id: start.app_id,
      agent_id: start.agent_id,
      thread_id: start.thread_id,
      session_key: sessionKey,
      payload_bytes: start.payload_bytes,
      received_at: start.received_at,
    });
    const session_key = agentSessionKey(app.app_id, threadId);
    const toAgent = { event_id: eventId, app_id: app.app_id, thread_id: threadId, session_key };
    const event = { eventId, traceparent: this.d.traceparentOf(eventId) };
    engine.toAgent(agentId, frames.eventToAgent(toAgent, c.payloadJson), event);
  }

  private timedOut(eventId: string): void {
    const ev = this.d.table.get(eventId);
    if (!ev) return;
    const seconds = Math.round(this.d.agentTimeoutMs / 1000);
    const error = errorText('AGENT_TIMEOUT', 'no_answer', { agent_id: ev.agentId, seconds });
    this.d.endings.fail(ev, 'AGENT_TIMEOUT', error, 'agent_timeout');
  }

  /** Told before the session that took its place, so a store applies the two in order. */
  private evicted(session: SessionRecord): void {
    this.evictedLog.record(session.app_id);
    this.d.observer.sessionEvicted(session);
  }
}
