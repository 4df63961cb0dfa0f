// The agent connector as a library: run agent handlers from your own code instead of `bridge-connector`.
export {
  Connector,
  ConnectorStartError,
  type ConnectorOptions,
  type AgentOverrides,
  type StopResult,
} from './connector.js';
export {
  loadConnectorConfig,
  parseConnectorConfig,
  resolveConnectorConfig,
  ConnectorConfigError,
  type ResolvedConnectorConfig,
} from './config.js';
export { loadHandler, HandlerLoadError, type AgentEvent, type AgentContext, type AgentHandler } from './handler.js';
export { registerTypeScriptHooks, type TypeScriptLoader } from './typescript-hooks.js';
export { splitByBytes, splitWords } from './fragments.js';
export { CancelledEventError } from './event-run.js';
export type { ConnectorEvents, ConnectorNotification, CutShortEvent, StoppedNotification } from './notifications.js';
