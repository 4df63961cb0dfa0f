// The client SDKs: the app client, and the agent connector that runs agent handlers.
export * from './app-client.js';
export { BridgeConnection, backoffDelay, type Carrier, type ReconnectOptions, type ConnectionState } from './connection.js';
export { Connector, ConnectorStartError, type ConnectorOptions, type AgentOverrides } from './connector/connector.js';
export { loadConnectorConfig, parseConnectorConfig, resolveConnectorConfig, ConnectorConfigError, type ResolvedConnectorConfig } from './connector/config.js';
export { loadHandler, type AgentEvent, type AgentContext, type AgentHandler } from './connector/handler.js';
export { splitByBytes, splitWords } from './connector/fragments.js';
export type { ConnectorEvents, ConnectorNotification } from './connector/notifications.js';
