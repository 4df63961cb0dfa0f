// The events in flight on this node, filed by id, by app, by the app connection they go to and by agent, with the
// sums their bounds count (L13, L14, L23): how many each app and agent has, the bytes their payloads hold, and the
// memory their streamed texts share per agent and on the node.
import { errorText } from '../shared/error-text.js';
import type { Connection } from './engine.js';
import { EventInFlight, type EventStartFacts } from './event-in-flight.js';
import type { InFlightBound } from './limit-counters.js';
import { ByteBudget, StreamedText } from './streamed-text.js';

export interface EventTableLimits {
  perApp: number;
  perAgent: number;
  total: number;
  payloadsMaxBytes: number;
  textMaxBytes: number;
  textPerAgentMaxBytes: number;
  textTotalMaxBytes: number;
}

export class EventTable {
  private readonly events = new Map<string, EventInFlight>();
  private readonly byAgent = new Map<string, Set<EventInFlight>>();
  private readonly countByApp = new Map<string, number>();
  /** Per app connection, the events it receives (to let go of their text when it goes, L15). */
  private readonly byConn = new Map<Connection, Set<EventInFlight>>();
  /** Per agent with events in flight, the memory its events' kept texts share (L14). */
  private readonly textBudgets = new Map<string, ByteBudget>();
  /** Every agent's budget takes from it too: the kept texts of the whole node (L23). */
  private readonly nodeTextBudget: ByteBudget;
  private payloadBytes = 0;

  constructor(readonly limits: EventTableLimits) {
    this.nodeTextBudget = new ByteBudget(limits.textTotalMaxBytes, 'node_limit');
  }

  get size(): number {
    return this.events.size;
  }

  get(eventId: string): EventInFlight | undefined {
    return this.events.get(eventId);
  }

  has(eventId: string): boolean {
    return this.events.has(eventId);
  }

  all(): EventInFlight[] {
    return [...this.events.values()];
  }

  ofAgent(agentId: string): EventInFlight[] {
    return [...(this.byAgent.get(agentId) ?? [])];
  }

  hasEventsOf(agentId: string): boolean {
    return (this.byAgent.get(agentId)?.size ?? 0) > 0;
  }

  /** The events whose frames go to `conn`, forgotten as such (the connection is gone). */
  takeOfConn(conn: Connection): Iterable<EventInFlight> {
    const of = this.byConn.get(conn) ?? [];
    this.byConn.delete(conn);
    return of;
  }

  /** The bound of L13 (or the node's, L23) that refuses one more event, the app's first; none when all have room. */
  overBound(appId: string, agentId: string, payloadBytes: number): { bound: InFlightBound; error: string } | undefined {
    const { perApp, perAgent, total, payloadsMaxBytes } = this.limits;
    const ofApp = this.countByApp.get(appId) ?? 0;
    if (ofApp >= perApp)
      return { bound: 'app', error: errorText('TOO_MANY_EVENTS', 'app', { app_id: appId, count: ofApp }) };
    const ofAgent = this.byAgent.get(agentId)?.size ?? 0;
    if (ofAgent >= perAgent) {
      return { bound: 'agent', error: errorText('TOO_MANY_EVENTS', 'agent', { agent_id: agentId, count: ofAgent }) };
    }
    if (this.events.size >= total)
      return { bound: 'total', error: errorText('TOO_MANY_EVENTS', 'total', { count: this.events.size }) };
    if (this.payloadBytes + payloadBytes > payloadsMaxBytes) {
      return { bound: 'payloads', error: errorText('TOO_MANY_EVENTS', 'payloads', { bytes: this.payloadBytes }) };
    }
    return undefined;
  }

  /** An accepted event, filed under its app, its app connection and its agent. */
  add(facts: EventStartFacts): EventInFlight {
    let budget = this.textBudgets.get(facts.agentId);
    if (!budget) {
      budget = new ByteBudget(this.limits.textPerAgentMaxBytes, 'agent_limit', this.nodeTextBudget);
      this.textBudgets.set(facts.agentId, budget);
    }
    const ev = new EventInFlight(facts, new StreamedText(budget, this.limits.textMaxBytes));
    this.events.set(ev.eventId, ev);
    this.payloadBytes += ev.payloadBytes;
    this.countByApp.set(ev.app.app_id, (this.countByApp.get(ev.app.app_id) ?? 0) + 1);
    this.fileUnder(ev, ev.appConn);
    let own = this.byAgent.get(ev.agentId);
    if (!own) this.byAgent.set(ev.agentId, (own = new Set()));
    own.add(ev);
    return ev;
  }

  /** The event's frames go to `conn` from now on; filed under it if it is a live connection of this node. */
  move(ev: EventInFlight, conn: Connection, connLive: boolean): void {
    this.byConn.get(ev.appConn)?.delete(ev);
    ev.moveTo(conn);
    if (connLive) this.fileUnder(ev, conn);
  }

  /** The event is over: unfiled, its text and timer let go. */
  remove(ev: EventInFlight): void {
    ev.finish();
    this.events.delete(ev.eventId);
    this.payloadBytes -= ev.payloadBytes;
    const ofApp = (this.countByApp.get(ev.app.app_id) ?? 1) - 1;
    if (ofApp > 0) this.countByApp.set(ev.app.app_id, ofApp);
    else this.countByApp.delete(ev.app.app_id);
    this.byConn.get(ev.appConn)?.delete(ev);
    const own = this.byAgent.get(ev.agentId);
    own?.delete(ev);
    if (own?.size === 0) {
      this.byAgent.delete(ev.agentId);
      this.textBudgets.delete(ev.agentId); // every text of the agent has been released: its budget is back at 0
    }
  }

  /** Bytes held right now for the streamed text of events in flight (L14). */
  streamedTextBytes(): number {
    let bytes = 0;
    for (const budget of this.textBudgets.values()) bytes += budget.used;
    return bytes;
  }

  private fileUnder(ev: EventInFlight, conn: Connection): void {
    let of = this.byConn.get(conn);
    if (!of) this.byConn.set(conn, (of = new Set()));
    of.add(ev);
  }
}
