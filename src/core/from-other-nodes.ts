// What the engine tells the core: an event handed to its agent here, and what other nodes hand this one: an agent's message for an event held here, the agents'
// comings and goings, and the two ends of a resume relayed between nodes (R8). A bug costs that one message,
// never the engine's other listeners.
import { errorText } from '../shared/error-text.js';
import type { Logger } from '../shared/logger.js';
import type { AgentSide } from './agent-side.js';
import type { Cancels } from './cancels.js';
import type { Connections } from './connections.js';
import type { Delivery, EngineListener } from './engine.js';
import type { Endings } from './endings.js';
import * as frames from './frames.js';
import type { BridgeObserver } from './observer.js';
import type { ResumeDesk } from './resume-desk.js';

export interface FromOtherNodesDeps {
  delivery: Delivery;
  agentSide: AgentSide;
  connections: Connections;
  endings: Endings;
  desk: ResumeDesk;
  cancels: Cancels;
  observer: BridgeObserver;
  log: Logger;
}

export function fromOtherNodes(d: FromOtherNodesDeps): EngineListener {
  const { log } = d;
  const guarded = (what: string, eventId: string, handle: () => void) => {
    try {
      handle();
    } catch (err) {
      log.error({ event_id: eventId, err }, `${what} failed`);
    }
  };
  return {
    eventDelivered: (agentId, event) =>
      d.observer.eventDelivered({ event_id: event.eventId, agent_id: agentId, traceparent: event.traceparent }),
    agentMessage(agentId, message) {
      try {
        d.agentSide.eventMessage(agentId, message, (frame) => d.delivery.toAgent(agentId, frame));
      } catch (err) {
        log.error({ agent_id: agentId, event_id: message.event_id, err }, 'agent message from another node failed');
      }
    },
    agentPresence: (agentId, online) => (online ? d.endings.agentBack(agentId) : d.endings.agentLeft(agentId)),
    agentReplaced(agentId, conn) {
      if (!d.connections.has(conn)) return;
      log.info({ agent_id: agentId }, 'agent connection replaced by a newer one on another node');
      d.connections.refuse(conn, 'CONNECTION_REPLACED', errorText('CONNECTION_REPLACED', 'replaced'));
    },
    agentsCutOff(agentIds) {
      for (const agentId of agentIds)
        d.endings.failEventsOf(agentId, errorText('AGENT_OFFLINE', 'cut_off', { agent_id: agentId }));
    },
    eventUndelivered: (agentId, eventId) =>
      guarded('an event that did not reach its agent', eventId, () => d.endings.undelivered(agentId, eventId)),
    resumeRequest: (from, request, connId) =>
      guarded('resume from another node', request.event_id, () => d.desk.resumeRequest(from, request, connId)),
    framesForApp: (from, connId, eventId, sent) =>
      guarded('resumed frames from another node', eventId, () => d.desk.framesForApp(from, connId, eventId, sent)),
    resumerGone: (from, connId, eventId) =>
      guarded('resumer gone on another node', eventId, () => d.desk.resumerGone(from, connId, eventId)),
    cancelRequest: (from, connId, eventId, appId) =>
      guarded('cancel from another node', eventId, () => d.cancels.cancelRequest(from, connId, eventId, appId)),
    homesGone(node) {
      d.cancels.homesGone(node);
      d.desk.homesGone(node);
    },
    cancelForAgent(conn, eventId) {
      if (d.connections.get(conn)?.cancellable) conn.send(frames.cancelToAgent(eventId));
    },
  };
}
