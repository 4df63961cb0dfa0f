// The client SDKs: the app client, and the agent connector that runs agent handlers.
export * from './app-client.js';
export { BridgeConnection, backoffDelay, type Carrier, type ReconnectOptions, type ConnectionState } from './connection.js';
export * from './connector/index.js';
