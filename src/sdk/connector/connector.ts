// The agent connector (§1.11, §2.6, §6.5): one BridgeConnection per configured agent to `connection.url` (the agent
// endpoint itself), each event handed to the handler with its runtime session, tokens streamed in fragments within
// the limit, an optional health endpoint, the local notifications as typed events, and a stop that lets the events
// in flight finish within a bounded drain and names those it had to cut short (C8).
import { EventEmitter } from 'node:events';
import { LIMITS, type ConnectorAgentHealth, type ConnectorHealth } from '../../../generated/index.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import { deferred, type Deferred } from '../deferred.js';
import { AgentRunner, type ConnectionTuning } from './agent-runner.js';
import type { ResolvedConnectorConfig } from './config.js';
import type { AgentHandler } from './handler.js';
import { connectorStatus, startHealthServer, type HealthServer } from './health.js';
import type { ConnectorEvents, CutShortEvent, Notify, StoppedNotification } from './notifications.js';
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
  /**
   * How long stop() lets the events in flight finish before it ends them with AGENT_ERROR; 0 ends them at once.
   * Default LIMITS.connectorDrainTimeoutMs (C8).
   */
  drainTimeoutMs?: number;
}

/** What a stop did: the events it ended early (also logged, and notified as `stopped`). */
export type StopResult = StoppedNotification;

export class ConnectorStartError extends Error {
  override readonly name = 'ConnectorStartError';
}

export class Connector extends EventEmitter<ConnectorEvents> {
  private readonly runners = new Map<string, AgentRunner>();
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly notify: Notify;
  private readonly drainTimeoutMs: number;
  private healthServer: HealthServer | undefined;
  private state: 'new' | 'starting' | 'running' | 'closing' | 'closed' = 'new';
  /** The stop under way: its result, and how to end its drain now. */
  private stopping: { result: Promise<StopResult>; cutDrainShort: () => void } | undefined;

  constructor(
    readonly config: ResolvedConnectorConfig,
    private readonly options: ConnectorOptions,
  ) {
    super();
    this.logger = options.logger ?? silentLogger;
    const clock = (this.clock = options.clock ?? systemClock);
    this.drainTimeoutMs = options.drainTimeoutMs ?? LIMITS.connectorDrainTimeoutMs;
    if (!Number.isFinite(this.drainTimeoutMs) || this.drainTimeoutMs < 0)
      throw new RangeError(`drainTimeoutMs must be 0 or more, got ${this.drainTimeoutMs}`);
    for (const id of Object.keys(options.agents ?? {})) {
      if (!config.agents.some((a) => a.agent_id === id))
        throw new RangeError(`options.agents names ${id}, which is not in the configuration`);
    }
    const wordsPerFragment = options.wordsPerFragment ?? DEFAULT_WORDS_PER_FRAGMENT;
    if (!Number.isInteger(wordsPerFragment) || wordsPerFragment < 1)
      throw new RangeError(`wordsPerFragment must be a positive integer, got ${wordsPerFragment}`);
    const notify: Notify = (this.notify = (name, ...args) => {
      try {
        (this.emit as (event: string, ...payload: unknown[]) => boolean)(name, ...args);
      } catch (err) {
        this.logger.error({ err, notification: name }, 'a notification listener threw');
      }
    });
    for (const agent of config.agents) {
      const overrides = options.agents?.[agent.agent_id] ?? {};
      const handlerTimeoutMs = overrides.handlerTimeoutMs ?? options.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS;
      if (!(handlerTimeoutMs > 0))
        throw new RangeError(`handlerTimeoutMs of ${agent.agent_id} must be positive, got ${handlerTimeoutMs}`);
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
   * closed again and this rejects with a ConnectorStartError naming each failed agent. With `maxRetries: -1` an agent
   * never runs out (C7): this waits until the bridge accepts it, or until stop() or close().
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`the connector was already started (${this.state})`);
    this.state = 'starting';
    try {
      if (this.config.health) {
        this.healthServer = await startHealthServer(
          {
            ...this.config.health,
            ...(this.options.healthHost !== undefined ? { host: this.options.healthHost } : {}),
          },
          () => this.health(),
        );
      }
      const results = await Promise.allSettled([...this.runners.values()].map((r) => r.start()));
      const failed = [...this.runners.keys()].flatMap((id, i) => {
        const r = results[i];
        return r?.status === 'rejected'
          ? [`${id}: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`]
          : [];
      });
      if (failed.length) throw new ConnectorStartError(`could not connect ${failed.join('; ')}`);
    } catch (err) {
      await this.shutdown(0, false);
      throw err;
    }
    if (this.state === 'starting') this.state = 'running';
  }

  /**
   * Stops gracefully (C8): from now on each new event is answered at once with AGENT_ERROR (its handler is not
   * started); the events in flight get up to `drainTimeoutMs` to finish; then whatever is left ends with AGENT_ERROR
   * as in close(), and every connection and the health endpoint close. Resolves with the events it ended early,
   * which it also logs (warn) and notifies (`stopped`). A close() during the drain ends it at once.
   */
  stop(): Promise<StopResult> {
    return this.shutdown(this.drainTimeoutMs, true);
  }

  /**
   * Stops at once: ends every event in flight with `error` (never silence), closes every connection and the health
   * endpoint. During a stop()'s drain, cuts the drain short; both resolve with the same result.
   */
  close(): Promise<StopResult> {
    return this.shutdown(0, true);
  }

  /** `announce`: notify `stopped` (not when a failed start closes what it opened). */
  private shutdown(drainMs: number, announce: boolean): Promise<StopResult> {
    if (this.stopping) {
      if (drainMs === 0) this.stopping.cutDrainShort();
      return this.stopping.result;
    }
    const cutShort = deferred<void>();
    const result = this.drainThenClose(drainMs, cutShort, announce);
    this.stopping = { result, cutDrainShort: () => cutShort.resolve() };
    return result;
  }

  private async drainThenClose(drainMs: number, cutShort: Deferred<void>, announce: boolean): Promise<StopResult> {
    this.state = 'closing';
    const runners = [...this.runners.values()];
    const drained = Promise.all(runners.map((r) => r.drain()));
    const inFlight = runners.reduce((n, r) => n + r.inFlight, 0);
    if (inFlight > 0 && drainMs > 0) {
      this.logger.info(
        { in_flight: inFlight, drain_timeout_ms: drainMs },
        `stopping: letting ${inFlight} event(s) in flight finish, for ${drainMs} ms at most`,
      );
      const timer = this.clock.setTimer(drainMs, () => cutShort.resolve());
      await Promise.race([drained, cutShort.promise]);
      timer.cancel();
    }
    const ended = await Promise.all(
      runners.map(async (r) => (await r.close()).map((eventId): CutShortEvent => ({ agentId: r.agentId, eventId }))),
    );
    const cut = ended.flat();
    if (cut.length) {
      const named = cut.map((e) => `${e.eventId} (${e.agentId})`).join(', ');
      this.logger.warn(
        { events: cut.map((e) => ({ agent_id: e.agentId, event_id: e.eventId })) },
        `stop ended ${cut.length} event(s) still in flight with AGENT_ERROR: ${named}`,
      );
    }
    await this.healthServer?.close();
    this.healthServer = undefined;
    this.state = 'closed';
    const result: StopResult = { cutShort: cut };
    if (announce) this.notify('stopped', result);
    return result;
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
