// The core: the bridge between apps and agents, with its bounds from the configuration. Its shutdown ends the events
// in flight (SHUTTING_DOWN) and closes the connections (1001): once no new connection comes, before the event log
// takes its last commit and the cluster link closes.
import type { Config } from '../config.js';
import type { ControlHandlers } from '../cluster/control-handlers.js';
import { makeBridge, type Bridge, type BridgeOptions } from '../core/bridge.js';
import type { ChosenEngine } from './engine.js';
import type { Service } from './services.js';

/** What the core is made of besides the configuration. */
export type BridgeParts = Required<Pick<BridgeOptions, 'directory' | 'clock' | 'log' | 'sessions' | 'observer'>> & {
  engine: ChosenEngine;
  /** The WebSocket connections the node takes (MAX_CONNECTIONS, below the open-files limit). */
  maxWebSockets: number;
  agentReconnectGraceMs: number | undefined;
  /** Set when events are traced (O17). */
  traceparentOf: BridgeOptions['traceparentOf'];
};

export function bridgeCore(config: Config, parts: BridgeParts): Service<Bridge> {
  return { name: 'bridge', start: () => makeBridge(bridgeOptions(config, parts)), stop: (bridge) => bridge.shutdown() };
}

function bridgeOptions(config: Config, parts: BridgeParts): BridgeOptions {
  const { engine, maxWebSockets, agentReconnectGraceMs, traceparentOf, ...made } = parts;
  return {
    ...made,
    ...(traceparentOf && { traceparentOf }),
    engine: engine.engine,
    rateLimiter: engine.rateLimiter,
    agentTimeoutMs: config.agentTimeoutMs,
    maxEventsInFlightPerApp: config.maxEventsInFlightPerApp,
    maxEventsInFlightPerAgent: config.maxEventsInFlightPerAgent,
    maxEventsInFlight: config.maxEventsInFlight,
    eventPayloadsMaxBytes: config.eventPayloadsMaxBytes,
    streamedTextMaxBytes: config.streamedTextMaxBytes,
    streamedTextPerAgentMaxBytes: config.streamedTextPerAgentMaxBytes,
    streamedTextTotalMaxBytes: config.streamedTextTotalMaxBytes,
    resumeBufferPerAppMaxBytes: config.resumeBufferPerAppMaxBytes,
    resumeBufferMaxBytes: config.resumeBufferMaxBytes,
    fairShares: {
      fragmentsPerSecond: config.fragmentsPerOrgPerSecond,
      fragmentsBurst: config.fragmentsPerOrgBurst,
      discoversPerSecond: config.discoversPerOrgPerSecond,
      discoversBurst: config.discoversPerOrgBurst,
      resumesPerSecond: config.resumesPerOrgPerSecond,
      resumesBurst: config.resumesPerOrgBurst,
      replayBytesPerSecond: config.resumeReplayBytesPerOrgPerSecond,
      replayBytesBurst: config.resumeReplayBytesPerOrgBurst,
    },
    connectionLimits: {
      total: maxWebSockets,
      perAddress: config.maxConnectionsPerAddress,
      perApp: config.maxConnectionsPerApp,
    },
    sendBufferMaxBytes: config.sendBufferMaxBytes,
    sendBufferBounds: {
      app: config.sendBufferPerAppMaxBytes,
      agent: config.sendBufferPerAgentMaxBytes,
      total: config.sendBufferTotalMaxBytes,
    },
    partialMessageBounds: {
      app: config.partialMessagesPerAppMaxBytes,
      agent: config.partialMessagesPerAgentMaxBytes,
      total: config.partialMessagesTotalMaxBytes,
    },
    partialMessageTimeoutMs: config.partialMessageTimeoutMs,
    wsPingAfterMs: config.wsPingAfterMs,
    wsPongTimeoutMs: config.wsPongTimeoutMs,
    ...(agentReconnectGraceMs !== undefined ? { agentReconnectGraceMs } : {}),
  };
}

/** Another node revoked an app or agent: its connections here close too. */
export function revokeHandlers(bridge: Bridge, directory: BridgeParts['directory']): Pick<ControlHandlers, 'revoke'> {
  return {
    revoke(change) {
      // Inactive here at once, before the reload that follows: a reconnect in between is refused too.
      const owner = change.kind === 'app' ? directory.apps.get(change.id) : directory.agents.get(change.id);
      if (owner) owner.active = false;
      bridge.revoke(change.kind, change.id, change.cause);
    },
  };
}
