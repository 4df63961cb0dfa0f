// The client SDKs: the app client, and the agent connector that runs agent handlers.
export * from './app-client.js';
export { BridgeConnection, type ConnectionState } from './connection.js';
export { backoffDelay, type Carrier, type ReconnectOptions } from './connection-options.js';
export * from './connector/index.js';
