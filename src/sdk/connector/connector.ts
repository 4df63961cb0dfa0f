// The agent connector (§1.11, §2.6, §6.5): one BridgeConnection per configured agent to `connection.url` (the agent
// endpoint itself), each event handed to the handler with its runtime session, tokens streamed in fragments within
// the limit, an optional health endpoint, and the local notifications as typed events.
import { EventEmitter } from 'node:events';
import { LIMITS, type ConnectorAgentHealth, type ConnectorHealth } from '../../../generated/index.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import { AgentRunner, type ConnectionTuning } from './agent-runner.js';
import type { ResolvedConnectorConfig } from './config.js';
import type { AgentHandler } from './handler.js';
import { connectorStatus, startHealthServer, type HealthServer } from './health.js';
import type { ConnectorEvents, Notify } from './notifications.js';
import type { SessionStore } from './sessions.js';

/** The default handler timeout ends the event this much before the bridge's own AGENT_TIMEOUT would. */
const HANDLER_TIMEOUT_MARGIN_MS = 5_000;
export const DEFAULT_HANDLER_TIMEOUT_MS = LIMITS.agentTimeoutMs - HANDLER_TIMEOUT_MARGIN_MS;
/** ctx.stream's default: "a few words" per token (§8 recommends 1 to 5). */
export const DEFAULT_WORDS_PER_FRAGMENT = 3;

export interface AgentOverrides {
  handler?: AgentHandler;
  handlerTimeoutMs?: number;
}

export interface ConnectorOptions {
  /** The handler for every agent (unless `agents[id].handler` overrides it). */
  handler: AgentHandler;
  /** A handler that has not ended its event by then gets AGENT_TIMEOUT sent for it. Default LIMITS.agentTimeoutMs - 5 s. */
  handlerTimeoutMs?: number;
  /** Words per fragment of ctx.stream() when the handler gives none. Default 3. */
  wordsPerFragment?: number;
  /** Per agent_id. */
  agents?: Record<string, AgentOverrides>;
  /** All time (heartbeat, backoff, handler timeouts, session TTL). Default: the system clock. */
  clock?: Clock;
  logger?: Logger;
  connection?: ConnectionTuning;
  /** Interface the health endpoint listens on, over the configuration's `health.host` (default 127.0.0.1). */
  healthHost?: string;
}

export class ConnectorStartError extends Error {
  override readonly name = 'ConnectorStartError';
}

export class Connector extends EventEmitter<ConnectorEvents> {
  private readonly runners = new Map<string, AgentRunner>();
  private readonly logger: Logger;
  private healthServer: HealthServer | undefined;
  private state: 'new' | 'starting' | 'running' | 'closing' | 'closed' = 'new';

  constructor(
    readonly config: ResolvedConnectorConfig,
    private readonly options: ConnectorOptions,
  ) {
    super();
    this.logger = options.logger ?? silentLogger;
    const clock = options.clock ?? systemClock;
    for (const id of Object.keys(options.agents ?? {})) {
      if (!config.agents.some((a) => a.agent_id === id)) throw new RangeError(`options.agents names ${id}, which is not in the configuration`);
    }
    const wordsPerFragment = options.wordsPerFragment ?? DEFAULT_WORDS_PER_FRAGMENT;
    if (!Number.isInteger(wordsPerFragment) || wordsPerFragment < 1) throw new RangeError(`wordsPerFragment must be a positive integer, got ${wordsPerFragment}`);
    const notify: Notify = (name, ...args) => {
      try {
        (this.emit as (event: string, ...payload: unknown[]) => boolean)(name, ...args);
      } catch (err) {
        this.logger.error({ err, notification: name }, 'a notification listener threw');
      }
    };
    for (const agent of config.agents) {
      const overrides = options.agents?.[agent.agent_id] ?? {};
      const handlerTimeoutMs = overrides.handlerTimeoutMs ?? options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
      if (!(handlerTimeoutMs > 0)) throw new RangeError(`handlerTimeoutMs of ${agent.agent_id} must be positive, got ${handlerTimeoutMs}`);
      const handler = overrides.handler ?? options.handler;
      if (typeof handler !== 'function') throw new TypeError(`no handler function for agent ${agent.agent_id}`);
      this.runners.set(
        agent.agent_id,
        new AgentRunner({
          agent,
          url: config.connection.url,
          reconnect: config.connection.reconnect,
          handler,
          handlerTimeoutMs,
          wordsPerFragment,
          clock,
          logger: this.logger,
          notify,
          ...(options.connection ? { connection: options.connection } : {}),
        }),
      );
    }
  }

  /**
   * Starts the health endpoint (if configured), then connects every agent; resolves when all are connected. If an
   * agent is refused for good (a connection error with `retry: false`: UNAUTHORIZED, TOKEN_REVOKED, FORBIDDEN, CONNECTION_REPLACED) or runs out of retries, everything is
   * closed again and this rejects with a ConnectorStartError naming each failed agent.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`the connector was already started (${this.state})`);
    this.state = 'starting';
    try {
      if (this.config.health) {
        this.healthServer = await startHealthServer({ ...this.config.health, ...(this.options.healthHost !== undefined ? { host: this.options.healthHost } : {}) }, () => this.health());
      }
      const results = await Promise.allSettled([...this.runners.values()].map((r) => r.start()));
      const failed = [...this.runners.keys()].flatMap((id, i) => {
        const r = results[i];
        return r?.status === 'rejected' ? [`${id}: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`] : [];
      });
      if (failed.length) throw new ConnectorStartError(`could not connect ${failed.join('; ')}`);
    } catch (err) {
      await this.close();
      throw err;
    }
    if (this.state === 'starting') this.state = 'running';
  }

  /** Ends every event in flight with `error` (never silence), closes every connection and the health endpoint. */
  async close(): Promise<void> {
    if (this.state === 'closing' || this.state === 'closed') return;
    this.state = 'closing';
    await Promise.all([...this.runners.values()].map((r) => r.close()));
    await this.healthServer?.close();
    this.healthServer = undefined;
    this.state = 'closed';
  }

  /** What the health endpoint returns. */
  health(): ConnectorHealth {
    const agents: Record<string, ConnectorAgentHealth> = {};
    for (const [id, runner] of this.runners) agents[id] = runner.health();
    return { status: connectorStatus(agents), agents };
  }

  /** The health endpoint's URL once started (undefined when none is configured). */
  get healthUrl(): string | undefined {
    return this.healthServer?.url;
  }

  get agentIds(): string[] {
    return [...this.runners.keys()];
  }

  /** The runtime sessions of one agent (for inspection). */
  sessions(agentId: string): SessionStore {
    return this.runner(agentId).sessions;
  }

  /** Whether one agent's connection is open. */
  isConnected(agentId: string): boolean {
    return this.runner(agentId).isConnected;
  }

  /** Events of one agent handed to the handler and not yet ended. */
  inFlight(agentId: string): number {
    return this.runner(agentId).inFlight;
  }

  private runner(agentId: string): AgentRunner {
    const runner = this.runners.get(agentId);
    if (!runner) throw new RangeError(`agent ${agentId} is not in the configuration`);
    return runner;
  }
}
