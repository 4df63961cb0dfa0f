// What an agent's connection sends (W11-W16): each frame parsed and validated, then handled by its type's handler
// (one per type of the generated union). A message about an event goes to the event's home — this node, or the one
// the event's id names — where its fragments are forwarded and kept (L14, R3) and its reply or error ends it.
import {
  LIMITS,
  validateAgentToServiceMessage,
  validateEventId,
  type AgentToServiceMessage,
  type AgentTokenMessage,
} from '../../generated/index.js';
import type { Clock } from '../shared/clock.js';
import { errorText } from '../shared/error-text.js';
import type { CancelledEvents } from './cancelled-events.js';
import type { Client } from './connections.js';
import type { AgentRecord } from './directory.js';
import { unhandled } from './dispatch.js';
import type { AgentEventMessage, Connection, Delivery } from './engine.js';
import type { Endings } from './endings.js';
import type { EventInFlight } from './event-in-flight.js';
import type { EventTable } from './event-table.js';
import type { FairShares } from './fair-share.js';
import * as frames from './frames.js';
import { utf8Length } from './frames.js';
import { parseInbound } from './inbound.js';
import type { AgentAnswer, Replies } from './replies.js';
import type { KeptStream } from './kept-stream.js';
import type { BridgeObserver } from './observer.js';
import type { ResumeStore } from './resume-store.js';

export interface AgentSideDeps {
  delivery: Delivery;
  /** Whether `conn` is a live connection of this node. */
  isLive(conn: Connection): boolean;
  table: EventTable;
  endings: Endings;
  replies: Replies;
  resumes: ResumeStore;
  cancelled: CancelledEvents;
  shares: FairShares;
  observer: BridgeObserver;
  clock: Clock;
}

export class AgentSide {
  /** Token fragments forwarded to apps since start (a counter for metrics, kept off the observer's path). */
  tokensForwarded = 0;

  constructor(private readonly d: AgentSideDeps) {}

  /** Returns a promise when the agent's organization is over its share of fragments (F3): its socket waits for it. */
  frame(client: Client, agent: AgentRecord, data: string, isBinary: boolean): Promise<void> | void {
    const parsed = parseInbound(data, isBinary, validateAgentToServiceMessage, 'AgentToServiceMessage');
    if (parsed.ok) return this.handle(parsed.message, client, agent);
    const eventId = validateEventId(parsed.fields.event_id) ? parsed.fields.event_id : undefined;
    client.conn.send(frames.agentError(parsed.code, parsed.error, eventId));
  }

  /** An agent's message about an event, on the node the event lives on; `answer` reaches the agent wherever it is. */
  eventMessage(agentId: string, message: AgentEventMessage, answer: AgentAnswer): void {
    this.aboutHeld(this.d.table.get(message.event_id), agentId, message, answer);
  }

  /** `ev`: the event the message is about, if it is held here (looked up once per fragment, not twice). */
  private aboutHeld(ev: EventInFlight | undefined, agentId: string, message: AgentEventMessage, answer: AgentAnswer) {
    if (!ev || ev.agentId !== agentId) {
      // A cancelled event's late frames are dropped without a word to the agent (S4).
      if (this.d.cancelled.drops(agentId, message.event_id, message.type !== 'token')) return;
      const error = errorText('INVALID_EVENT_ID', 'unknown', { event_id: message.event_id });
      return answer(frames.agentError('INVALID_EVENT_ID', error, message.event_id));
    }
    // A switch, not a handler map: this runs per fragment, and a map's lookup and call cost a fifth of the path.
    switch (message.type) {
      case 'token':
        return this.forwardToken(answer, ev, message);
      case 'reply':
        return this.d.replies.reply(answer, ev, message);
      case 'error':
        if (message.code === 'AGENT_TIMEOUT')
          return this.d.endings.fail(ev, 'AGENT_TIMEOUT', message.error, 'agent_timeout');
        return this.d.endings.fail(ev, 'AGENT_ERROR', message.error, 'agent_error');
      default:
        return unhandled(message);
    }
  }

  /** One case per type of the generated union: a type added to the spec does not compile until handled here. */
  private handle(message: AgentToServiceMessage, client: Client, agent: AgentRecord): Promise<void> | void {
    switch (message.type) {
      case 'ping':
        client.lastPingAt = this.d.clock.now();
        return client.conn.send(frames.PONG);
      case 'token':
      case 'reply':
      case 'error':
        return this.aboutEvent(message, client, agent);
      default:
        return unhandled(message);
    }
  }

  private aboutEvent(message: AgentEventMessage, client: Client, agent: AgentRecord): Promise<void> | void {
    // Taken, never dropped: over the share the fragment goes on and the agent's next frames wait.
    const pause = message.type === 'token' ? this.d.shares.fragment(agent.org_id) : 0;
    const ev = this.d.table.get(message.event_id);
    if (ev || !this.d.delivery.toEventHome(agent.agent_id, message))
      this.aboutHeld(ev, agent.agent_id, message, (frame) => client.conn.send(frame));
    if (pause) return new Promise((resolve) => this.d.clock.setTimer(pause, resolve));
  }

  private forwardToken(answer: AgentAnswer, ev: EventInFlight, message: AgentTokenMessage): void {
    const size = utf8Length(message.token);
    if (size > LIMITS.tokenFragmentMaxBytes) {
      const error = errorText('MESSAGE_TOO_LARGE', 'fragment', { bytes: size, limit: LIMITS.tokenFragmentMaxBytes });
      return answer(frames.agentError('MESSAGE_TOO_LARGE', error, ev.eventId));
    }
    if (ev.kept) return this.forwardKept(ev, ev.kept, message.token, size);
    if (!this.d.isLive(ev.appConn)) return; // the app is gone: nothing to forward, nothing to keep (L15)
    this.keepText(ev, message.token, size);
    this.tokensForwarded++;
    ev.appConn.send(frames.tokenFrame(ev.tokenPrefix(), message.token));
  }

  /** A resumable event's fragment: numbered and kept whether or not its connection is there to receive it (R3, R7). */
  private forwardKept(ev: EventInFlight, stream: KeptStream, fragment: string, size: number): void {
    this.keepText(ev, fragment, size);
    const json = JSON.stringify(fragment);
    const seq = this.d.resumes.keepFragment(stream, json);
    if (!this.d.endings.reaches(ev.appConn)) return;
    this.tokensForwarded++;
    ev.appConn.send(frames.seqTokenFrame(ev.tokenPrefix(), json, seq));
  }

  /** Adds a forwarded fragment to the event's kept text; a fragment over a bound discards the whole text (L14). */
  private keepText(ev: EventInFlight, fragment: string, size: number): void {
    const notKept = ev.streamedFragment(fragment, size);
    if (notKept) this.d.endings.discardText(ev, notKept);
    if (ev.fragmentCount === 1) this.d.observer.eventFirstFragment(ev.eventId, ev.latencyMs(this.d.clock));
  }
}
