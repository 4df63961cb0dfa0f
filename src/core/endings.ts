// How events in flight end: with the agent's reply or error, by timeout, with their agent gone past its grace (L6)
// or revoked, cut off with its node, or at shutdown. Every end is told to the observer once, with its latency on
// the monotonic clock (W10), and its final frame goes to the event's connection — or is kept for a resume (R7).
import type { ErrorCode, RevokeCause } from '../../generated/index.js';
import type { Clock, Timer } from '../shared/clock.js';
import { errorText } from '../shared/error-text.js';
import type { Logger } from '../shared/logger.js';
import { BurstLog, LOG_WINDOW_MS } from './burst-log.js';
import { OwnerLog } from './owner-log.js';
import type { Connection, Presence } from './engine.js';
import type { EventInFlight } from './event-in-flight.js';
import type { EventTable } from './event-table.js';
import * as frames from './frames.js';
import type { CoreCounters } from './limit-counters.js';
import type { BridgeObserver, EventEnd } from './observer.js';
import type { ResumeDesk } from './resume-desk.js';
import type { ResumeStore } from './resume-store.js';
import type { NotKept } from './streamed-text.js';

export interface EndingsDeps {
  table: EventTable;
  presence: Presence;
  resumes: ResumeStore;
  desk: ResumeDesk;
  observer: BridgeObserver;
  clock: Clock;
  log: Logger;
  counters: CoreCounters;
  /** Whether `conn` is a live connection of this node. */
  isLive(conn: Connection): boolean;
  /** How long the events of an agent that left wait for it to come back (L6). */
  graceMs: number;
}

export class Endings {
  private readonly offlineGrace = new Map<string, Timer>();
  // An app that goes with 1000 events in flight lets go of 1000 texts at once: one line, not 1000.
  private readonly discardedLog: BurstLog<NotKept | 'app_gone'>;
  /** Each event ended in error, at info, within a budget per agent (whose events they are). */
  private readonly errorLog: OwnerLog;

  constructor(private readonly d: EndingsDeps) {
    this.errorLog = new OwnerLog(d.log, d.clock, 'events ended in error');
    this.discardedLog = new BurstLog<NotKept | 'app_gone'>({
      clock: d.clock,
      windowMs: LOG_WINDOW_MS,
      report: (reasons, events) =>
        d.log.info(
          { events, reasons: Object.fromEntries(reasons) },
          `streamed text no longer kept: ${events} event(s)`,
        ),
    });
  }

  /** Whether a frame sent to `conn` can reach an app (a resumable event's connection may be gone meanwhile). */
  reaches(conn: Connection): boolean {
    return this.d.isLive(conn) || this.d.desk.reaches(conn);
  }

  /** Whether the event's end has anyone to go to: its app's connection, or a resume to come. */
  heard(ev: EventInFlight): boolean {
    return ev.kept ? !ev.kept.gapped : this.d.isLive(ev.appConn);
  }

  /** The event is over: unfiled and told to the observer. */
  end(ev: EventInFlight, how: Omit<EventEnd, 'event_id' | 'latency_ms'>): void {
    this.d.table.remove(ev);
    // A wall clock stepped back meanwhile must not end an event before it began.
    this.d.observer.eventEnded({
      event_id: ev.eventId,
      ...how,
      completed_at: Math.max(how.completed_at, ev.receivedAt),
      latency_ms: ev.latencyMs(this.d.clock),
    });
  }

  /** Ends the event with an error to its app. */
  fail(ev: EventInFlight, code: ErrorCode, error: string, outcome: EventEnd['outcome']): void {
    this.end(ev, { outcome, code, tokens_used: null, completed_at: this.d.clock.now() });
    const fields = {
      event_id: ev.eventId,
      app_id: ev.app.app_id,
      agent_id: ev.agentId,
      code,
      latency_ms: ev.latencyMs(this.d.clock),
    };
    this.errorLog.info({ kind: 'agent', id: ev.agentId }, code, fields, 'event ended in error');
    this.deliverFinal(ev, frames.appError(code, error, { event_id: ev.eventId, agent_id: ev.agentId }));
  }

  /**
   * Its app cancelled it (S2): CANCELLED is its last frame, and what it held is let go at once — a resumable
   * event's kept stream too: it cannot be resumed (S6).
   */
  cancel(ev: EventInFlight): void {
    this.end(ev, { outcome: 'cancelled', code: 'CANCELLED', tokens_used: null, completed_at: this.d.clock.now() });
    const error = errorText('CANCELLED', 'by_app', { event_id: ev.eventId });
    const frame = frames.appError('CANCELLED', error, { event_id: ev.eventId, agent_id: ev.agentId });
    if (!ev.kept) return ev.appConn.send(frame);
    this.d.resumes.cancel(ev.kept);
    if (this.reaches(ev.appConn)) ev.appConn.send(frame);
    this.d.desk.released(ev.appConn);
  }

  /** The reply or error that ends an event, to its connection; a resumable event's is kept for the window (R7). */
  deliverFinal(ev: EventInFlight, frame: string): void {
    if (!ev.kept) return ev.appConn.send(frame);
    this.d.resumes.keepFinal(ev.kept, frame);
    if (this.reaches(ev.appConn)) ev.appConn.send(frame);
    this.d.desk.released(ev.appConn);
  }

  /** The event's kept text is let go for good: its reply then needs `content` (L14, L15). Logged a burst at a time. */
  discardText(ev: EventInFlight, reason: NotKept | 'app_gone'): void {
    if (!ev.discardText()) return;
    this.d.counters.textDiscarded[reason]++;
    this.discardedLog.record(reason);
  }

  /** The agent's connection is gone, here or on another node: its events held here wait `graceMs` for it (L6). */
  agentLeft(agentId: string): void {
    if (!this.d.table.hasEventsOf(agentId)) return;
    const { clock, graceMs, presence } = this.d;
    this.offlineGrace.get(agentId)?.cancel();
    this.offlineGrace.set(
      agentId,
      clock.setTimer(graceMs, () => {
        this.offlineGrace.delete(agentId);
        if (!presence.isAgentOnline(agentId))
          this.failEventsOf(
            agentId,
            errorText('AGENT_OFFLINE', 'dropped', { agent_id: agentId, seconds: graceMs / 1000 }),
          );
      }),
    );
  }

  agentBack(agentId: string): void {
    this.offlineGrace.get(agentId)?.cancel();
    this.offlineGrace.delete(agentId);
  }

  /** The agent was deactivated or deleted: its events end now, without a grace. */
  agentRevoked(agentId: string, cause: RevokeCause): void {
    this.agentBack(agentId);
    this.failEventsOf(agentId, errorText('AGENT_OFFLINE', 'revoked', { agent_id: agentId, cause }));
  }

  /**
   * The event never reached its agent (it left its node first, or the node went, O21): it ends now, not after the
   * agent's grace or timeout, since nothing of it is with the agent to come back with it.
   */
  undelivered(agentId: string, eventId: string): void {
    const ev = this.d.table.get(eventId);
    if (ev?.agentId !== agentId) return; // over already
    this.fail(ev, 'AGENT_OFFLINE', errorText('AGENT_OFFLINE', 'not_reached', { agent_id: agentId }), 'agent_offline');
  }

  /** Ends with AGENT_OFFLINE every event of the agent held on this node. */
  failEventsOf(agentId: string, error: string): void {
    for (const ev of this.d.table.ofAgent(agentId))
      if (this.d.table.get(ev.eventId) === ev) this.fail(ev, 'AGENT_OFFLINE', error, 'agent_offline');
  }

  /** Ends every event in flight with SHUTTING_DOWN; no grace runs on. */
  shutdown(): void {
    for (const ev of this.d.table.all())
      this.fail(ev, 'SHUTTING_DOWN', errorText('SHUTTING_DOWN', 'in_flight'), 'shutdown');
    for (const timer of this.offlineGrace.values()) timer.cancel();
    this.offlineGrace.clear();
  }

  stop(): void {
    this.discardedLog.stop();
    this.errorLog.stop();
  }
}
