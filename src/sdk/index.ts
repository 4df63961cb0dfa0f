// The client SDKs: the app client, and the agent connector that runs agent handlers.
export * from './app-client.js';
export { BridgeConnection, BridgeConnectionError } from './connection.js';
export type {
  ConnectionState,
  ConnectionEvents,
  CloseInfo,
  ConnectionError,
  InvalidFrame,
} from './connection-events.js';
export {
  backoffDelay,
  type BridgeSocket,
  type Carrier,
  type ConnectionOptions,
  type Endpoint,
  type ReconnectOptions,
} from './connection-options.js';
export * from './connector/index.js';
