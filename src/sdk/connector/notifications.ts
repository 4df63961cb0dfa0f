// The connector's local notifications (§6.5), emitted as typed events by the Connector.

export interface ConnectedNotification {
  agentId: string;
}
export interface DisconnectedNotification {
  agentId: string;
  /** The WebSocket close code (e.g. 1006 for a dropped connection, 4401 for UNAUTHORIZED). */
  code: number;
  reason: string;
}
export interface ReconnectingNotification {
  agentId: string;
  /** 1-based. */
  attempt: number;
  delayMs: number;
}
export interface EventReceivedNotification {
  agentId: string;
  eventId: string;
  /** `svc:{app_id}:{thread_id}`. */
  sessionKey: string;
}
export interface EventRepliedNotification {
  agentId: string;
  eventId: string;
  /** The `token` messages sent for the event. */
  tokenCount: number;
}
export interface EventErrorNotification {
  agentId: string;
  /** Absent for an error about the connection or a frame that named no event. */
  eventId?: string;
  code: string;
  message: string;
}
/** Beyond §6.5: the app cancelled an event (S4); its handler's signal fired, and it sends nothing more for it. */
export interface EventCancelledNotification {
  agentId: string;
  eventId: string;
}
/** Beyond §6.5: the agent's connection has given up for good (closed by the connector, refused, or out of retries). */
export interface ClosedNotification {
  agentId: string;
  code: number;
  reason: string;
}

/** An event a stop ended with AGENT_ERROR because it was still in flight when the drain ended (or was cut short). */
export interface CutShortEvent {
  agentId: string;
  eventId: string;
}
/** Beyond §6.5: the connector has stopped (stop() or close(), SIGTERM or SIGINT for bridge-connector), C8. */
export interface StoppedNotification {
  /** The events the stop ended early; empty when every event in flight finished within the drain. */
  cutShort: CutShortEvent[];
}

export interface ConnectorEvents {
  connected: [ConnectedNotification];
  disconnected: [DisconnectedNotification];
  reconnecting: [ReconnectingNotification];
  'event-received': [EventReceivedNotification];
  'event-replied': [EventRepliedNotification];
  'event-cancelled': [EventCancelledNotification];
  'event-error': [EventErrorNotification];
  closed: [ClosedNotification];
  stopped: [StoppedNotification];
}

export type ConnectorNotification = keyof ConnectorEvents;

/** Every notification name, in the order of §6.5 (then `event-cancelled`, `closed` and `stopped`). */
export const CONNECTOR_NOTIFICATIONS = [
  'connected',
  'disconnected',
  'reconnecting',
  'event-received',
  'event-replied',
  'event-error',
  'event-cancelled',
  'closed',
  'stopped',
] as const satisfies readonly ConnectorNotification[];

export type Notify = <K extends ConnectorNotification>(name: K, ...args: ConnectorEvents[K]) => void;
