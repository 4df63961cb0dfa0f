// The server's configuration, from the environment, validated at start with a message that names the variable.
import envSchema from 'env-schema';
import { LIMITS } from '../generated/index.js';
import { DEFAULT_COMMIT_MAX_ROWS } from './store/write-behind.js';
import { unknownSettings, type UnknownSetting } from './unknown-settings.js';

export interface Config {
  port: number;
  host: string;
  /**
   * `sqlite:<path>` or `sqlite::memory:` (the embedded default), or `postgres://user:password@host:port/database`
   * (also `postgresql://`); one bridge per database either way (O7, O13). Never log it as it is: store/database-url.ts.
   */
  databaseUrl: string;
  adminToken: string | undefined;
  agentTimeoutMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `json` (one object a line), `pretty` (readable, coloured), or `auto`: pretty when stdout is a terminal. */
  logFormat: 'auto' | 'json' | 'pretty';
  testClock: boolean;
  /** Per-app token bucket refill; 0 turns the rate limit off. */
  rateLimitPerSecond: number;
  /** Per-app token bucket size; 0 turns the rate limit off. */
  rateLimitBurst: number;
  /** Each organization's fair share on a node (F3, R10): token buckets, refill per second and size; 0 turns one off. */
  fragmentsPerOrgPerSecond: number;
  fragmentsPerOrgBurst: number;
  discoversPerOrgPerSecond: number;
  discoversPerOrgBurst: number;
  resumesPerOrgPerSecond: number;
  resumesPerOrgBurst: number;
  resumeReplayBytesPerOrgPerSecond: number;
  resumeReplayBytesPerOrgBurst: number;
  /** Event log rows older than this are deleted by the hourly sweep; 0 keeps them forever. */
  eventLogRetentionDays: number;
  /** Audit trail rows older than this are deleted by the hourly sweep; 0 keeps them forever (D10). */
  auditLogRetentionDays: number;
  /** The event log's group-commit window. */
  eventLogFlushMs: number;
  /** Event-log rows and session changes waiting to be written, at most; over it the oldest finished rows are dropped (O15). */
  eventLogQueueMaxRows: number;
  /** Rows one group commit writes at most, the oldest first; a backlog goes a batch at a time (O15). */
  eventLogCommitMaxRows: number;
  /** A graceful shutdown gives up waiting after this long. */
  shutdownTimeoutMs: number;
  /** Bytes queued for one connection that it has not read yet; beyond them it is closed (SLOW_CONSUMER). */
  sendBufferMaxBytes: number;
  /** The same for all the connections of one app, of one agent, and of the node together (L19). */
  sendBufferPerAppMaxBytes: number;
  sendBufferPerAgentMaxBytes: number;
  sendBufferTotalMaxBytes: number;
  /** Bytes of messages received in part, per app, per agent and on the node, and how long one may take (L20). */
  partialMessagesPerAppMaxBytes: number;
  partialMessagesPerAgentMaxBytes: number;
  partialMessagesTotalMaxBytes: number;
  partialMessageTimeoutMs: number;
  /** TCP connections that have not completed an authenticated handshake, in all and per address (0: no bound; L21). */
  maxUnauthenticatedConnections: number;
  maxUnauthenticatedConnectionsPerAddress: number;
  /** A WebSocket ping to a connection silent this long (0: never), and how long its pong may take (L22). */
  wsPingAfterMs: number;
  wsPongTimeoutMs: number;
  /** Events in flight one app may have (L13); over it TOO_MANY_EVENTS. */
  maxEventsInFlightPerApp: number;
  /** Events in flight one agent may have (L13); over it TOO_MANY_EVENTS. */
  maxEventsInFlightPerAgent: number;
  maxEventsInFlight: number;
  eventPayloadsMaxBytes: number;
  /** Streamed text kept per event for an empty-content reply (L14). */
  streamedTextMaxBytes: number;
  /** Memory the kept streamed texts of one agent's events may hold together (L14). */
  streamedTextPerAgentMaxBytes: number;
  streamedTextTotalMaxBytes: number;
  /** Bytes kept for resumes of one app's events on a node, and of every app's on a node (R7). */
  resumeBufferPerAppMaxBytes: number;
  resumeBufferMaxBytes: number;
  /** Live sessions kept per app; one more evicts its least recently used (L17). */
  maxSessionsPerApp: number;
  maxSessions: number;
  /** Live WebSocket connections in all, per remote address (0: no bound) and per app (L18). */
  maxConnections: number;
  maxConnectionsPerAddress: number;
  maxConnectionsPerApp: number;
  /** PEM files of the certificate (chain) and its key: both set, the bridge serves https and wss (O12). */
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /** Reverse proxies in front of the bridge whose X-Forwarded-* headers are believed; 0 believes none (O12). */
  trustProxy: number;
  /** Set: /metrics is served there (plain HTTP, on metricsHost) and no longer on the main port (O12). */
  metricsPort: number | undefined;
  metricsHost: string;
  /** Set: this bridge is one node of several, linked through this Redis (O14); the database must be shared. */
  redisUrl: string | undefined;
  /** This node's id among several (default: a new random one at every start). */
  nodeId: string | undefined;
  /** The start of every Redis key and channel of this bridge's nodes (REDIS_PREFIX). */
  redisPrefix: string;
  /** Set: each event's life is traced and exported over OTLP (O17); OpenTelemetry's standard variables. */
  tracing: TracingConfig | undefined;
  /** Variables of the environment that look like settings but are none (a misspelling): warned at start. */
  unknownSettings: UnknownSetting[];
}

/** Where and how events' traces go (OTEL_* variables, as OpenTelemetry's SDKs read them). */
export interface TracingConfig {
  /** The OTLP/HTTP URL that takes the spans (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces). */
  url: string;
  serviceName: string;
  sampler: 'always_on' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_traceidratio';
  /** The share of events traced, for the ratio samplers (OTEL_TRACES_SAMPLER_ARG). */
  ratio: number;
  /** Spans ended and not yet exported that are kept; more are dropped, counted and logged (OTEL_BSP_MAX_QUEUE_SIZE). */
  maxQueueSize: number;
  /** How often spans are exported, in ms (OTEL_BSP_SCHEDULE_DELAY). */
  scheduleDelayMs: number;
}

/**
 * The longest delay a Node.js timer takes. A longer one fires after 1 ms instead (TimeoutOverflowWarning), so a
 * duration setting above it would time every event out at once, or end a shutdown before it starts.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** Sanity ceilings of counts the spec does not bound: a typo with extra digits is refused, not obeyed. */
const MAX_RATE = 1_000_000;
const MAX_RETENTION_DAYS = 3650;
const MAX_SEND_BUFFER_BYTES = 2 ** 30;
/** More memory than a node of this bridge has: a larger resume buffer is a typo. */
const MAX_RESUME_BUFFER_BYTES = 2 ** 36;
/** The same for any sum across a node's connections (L19, L20). */
const MAX_NODE_BYTES = 2 ** 36;
/** More proxies in a row than anyone runs: a larger count is a typo. */
const MAX_PROXY_HOPS = 10;

const SCHEMA = {
  type: 'object',
  properties: {
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    HOST: { type: 'string', minLength: 1, default: '127.0.0.1' },
    DATABASE_URL: { type: 'string', minLength: 1, default: 'sqlite:./data/bridge.sqlite' },
    ADMIN_TOKEN: { type: 'string', minLength: 16 },
    AGENT_TIMEOUT_MS: { type: 'integer', minimum: 1000, maximum: MAX_TIMER_MS, default: LIMITS.agentTimeoutMs },
    LOG_LEVEL: {
      type: 'string',
      enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      default: 'info',
    },
    LOG_FORMAT: { type: 'string', enum: ['auto', 'json', 'pretty'], default: 'auto' },
    BRIDGE_TEST_CLOCK: { type: 'string', enum: ['0', '1', 'true', 'false', ''], default: '0' },
    RATE_LIMIT_EVENTS_PER_SECOND: {
      type: 'number',
      minimum: 0,
      maximum: MAX_RATE,
      default: LIMITS.rateLimitEventsPerSecond,
    },
    RATE_LIMIT_BURST: { type: 'integer', minimum: 0, maximum: MAX_RATE, default: LIMITS.rateLimitBurst },
    FRAGMENTS_PER_ORG_PER_SECOND: {
      type: 'number',
      minimum: 0,
      maximum: MAX_RATE,
      default: LIMITS.fragmentsPerOrgPerSecond,
    },
    FRAGMENTS_PER_ORG_BURST: { type: 'integer', minimum: 0, maximum: MAX_RATE, default: LIMITS.fragmentsPerOrgBurst },
    DISCOVERS_PER_ORG_PER_SECOND: {
      type: 'number',
      minimum: 0,
      maximum: MAX_RATE,
      default: LIMITS.discoversPerOrgPerSecond,
    },
    DISCOVERS_PER_ORG_BURST: { type: 'integer', minimum: 0, maximum: MAX_RATE, default: LIMITS.discoversPerOrgBurst },
    RESUMES_PER_ORG_PER_SECOND: {
      type: 'number',
      minimum: 0,
      maximum: MAX_RATE,
      default: LIMITS.resumesPerOrgPerSecond,
    },
    RESUMES_PER_ORG_BURST: { type: 'integer', minimum: 0, maximum: MAX_RATE, default: LIMITS.resumesPerOrgBurst },
    RESUME_REPLAY_BYTES_PER_ORG_PER_SECOND: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_RESUME_BUFFER_BYTES,
      default: LIMITS.resumeReplayBytesPerOrgPerSecond,
    },
    RESUME_REPLAY_BYTES_PER_ORG_BURST: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_RESUME_BUFFER_BYTES,
      default: LIMITS.resumeReplayBytesPerOrgBurst,
    },
    EVENT_LOG_RETENTION_DAYS: { type: 'integer', minimum: 0, maximum: MAX_RETENTION_DAYS, default: 30 },
    AUDIT_LOG_RETENTION_DAYS: { type: 'integer', minimum: 0, maximum: MAX_RETENTION_DAYS, default: 365 },
    EVENT_LOG_FLUSH_MS: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    EVENT_LOG_QUEUE_MAX_ROWS: {
      type: 'integer',
      minimum: 1_000,
      maximum: 10_000_000,
      default: LIMITS.eventLogQueueMaxRows,
    },
    EVENT_LOG_COMMIT_MAX_ROWS: { type: 'integer', minimum: 100, maximum: 1_000_000, default: DEFAULT_COMMIT_MAX_ROWS },
    SHUTDOWN_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: MAX_TIMER_MS, default: 10_000 },
    SEND_BUFFER_MAX_BYTES: {
      type: 'integer',
      minimum: LIMITS.frameMaxBytes,
      maximum: MAX_SEND_BUFFER_BYTES,
      default: LIMITS.sendBufferMaxBytes,
    },
    // At least one frame: a frame to a client that reads is never what crosses them.
    SEND_BUFFER_PER_APP_MAX_BYTES: {
      type: 'integer',
      minimum: LIMITS.frameMaxBytes,
      maximum: MAX_NODE_BYTES,
      default: LIMITS.sendBufferPerAppMaxBytes,
    },
    SEND_BUFFER_PER_AGENT_MAX_BYTES: {
      type: 'integer',
      minimum: LIMITS.frameMaxBytes,
      maximum: MAX_NODE_BYTES,
      default: LIMITS.sendBufferPerAgentMaxBytes,
    },
    SEND_BUFFER_TOTAL_MAX_BYTES: {
      type: 'integer',
      minimum: LIMITS.frameMaxBytes,
      maximum: MAX_NODE_BYTES,
      default: LIMITS.sendBufferTotalMaxBytes,
    },
    // At least one message of the largest size, or a client sending one alone would be closed.
    PARTIAL_MESSAGES_PER_APP_MAX_BYTES: {
      type: 'integer',
      minimum: LIMITS.frameMaxBytes,
      maximum: MAX_NODE_BYTES,
      default: LIMITS.partialMessagesPerAppMaxBytes,
    },
    PARTIAL_MESSAGES_PER_AGENT_MAX_BYTES: {
      type: 'integer',
      minimum: LIMITS.frameMaxBytes,
      maximum: MAX_NODE_BYTES,
      default: LIMITS.partialMessagesPerAgentMaxBytes,
    },
    PARTIAL_MESSAGES_TOTAL_MAX_BYTES: {
      type: 'integer',
      minimum: LIMITS.frameMaxBytes,
      maximum: MAX_NODE_BYTES,
      default: LIMITS.partialMessagesTotalMaxBytes,
    },
    PARTIAL_MESSAGE_TIMEOUT_MS: {
      type: 'integer',
      minimum: 1000,
      maximum: MAX_TIMER_MS,
      default: LIMITS.partialMessageTimeoutMs,
    },
    MAX_EVENTS_IN_FLIGHT_PER_APP: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000,
      default: LIMITS.eventsInFlightPerAppMax,
    },
    MAX_EVENTS_IN_FLIGHT_PER_AGENT: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000,
      default: LIMITS.eventsInFlightPerAgentMax,
    },
    MAX_EVENTS_IN_FLIGHT: { type: 'integer', minimum: 1, maximum: 10_000_000, default: LIMITS.eventsInFlightMax },
    EVENT_PAYLOADS_MAX_BYTES: {
      type: 'integer',
      minimum: LIMITS.payloadMaxBytes,
      maximum: 2 ** 36,
      default: LIMITS.eventPayloadsMaxBytes,
    },
    STREAMED_TEXT_MAX_BYTES: {
      type: 'integer',
      minimum: 0,
      maximum: LIMITS.replyContentMaxBytes,
      default: LIMITS.streamedTextMaxBytes,
    },
    STREAMED_TEXT_MAX_BYTES_PER_AGENT: {
      type: 'integer',
      minimum: 0,
      maximum: 2 ** 32,
      default: LIMITS.streamedTextPerAgentMaxBytes,
    },
    STREAMED_TEXT_TOTAL_MAX_BYTES: {
      type: 'integer',
      minimum: 0,
      maximum: 2 ** 36,
      default: LIMITS.streamedTextTotalMaxBytes,
    },
    // At least one frame: an event's reply or error is kept whole or not at all.
    RESUME_BUFFER_PER_APP_MAX_BYTES: {
      type: 'integer',
      minimum: LIMITS.frameMaxBytes,
      maximum: MAX_RESUME_BUFFER_BYTES,
      default: LIMITS.resumeBufferPerAppMaxBytes,
    },
    RESUME_BUFFER_MAX_BYTES: {
      type: 'integer',
      minimum: LIMITS.frameMaxBytes,
      maximum: MAX_RESUME_BUFFER_BYTES,
      default: LIMITS.resumeBufferMaxBytes,
    },
    MAX_SESSIONS_PER_APP: { type: 'integer', minimum: 1, maximum: 10_000_000, default: LIMITS.sessionsPerAppMax },
    MAX_SESSIONS: { type: 'integer', minimum: 1, maximum: 100_000_000, default: LIMITS.sessionsMax },
    MAX_CONNECTIONS: { type: 'integer', minimum: 1, maximum: 10_000_000, default: LIMITS.connectionsMax },
    MAX_CONNECTIONS_PER_ADDRESS: {
      type: 'integer',
      minimum: 0,
      maximum: 10_000_000,
      default: LIMITS.connectionsPerAddressMax,
    },
    MAX_CONNECTIONS_PER_APP: { type: 'integer', minimum: 1, maximum: 10_000_000, default: LIMITS.connectionsPerAppMax },
    MAX_UNAUTHENTICATED_CONNECTIONS: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000_000,
      default: LIMITS.unauthenticatedConnectionsMax,
    },
    MAX_UNAUTHENTICATED_CONNECTIONS_PER_ADDRESS: {
      type: 'integer',
      minimum: 0,
      maximum: 10_000_000,
      default: LIMITS.unauthenticatedConnectionsPerAddressMax,
    },
    WS_PING_AFTER_MS: { type: 'integer', minimum: 0, maximum: MAX_TIMER_MS, default: LIMITS.wsPingAfterMs },
    WS_PONG_TIMEOUT_MS: { type: 'integer', minimum: 1000, maximum: MAX_TIMER_MS, default: LIMITS.wsPongTimeoutMs },
    TLS_CERT_FILE: { type: 'string', minLength: 1 },
    TLS_KEY_FILE: { type: 'string', minLength: 1 },
    TRUST_PROXY: { type: 'integer', minimum: 0, maximum: MAX_PROXY_HOPS, default: 0 },
    METRICS_PORT: { type: 'integer', minimum: 0, maximum: 65535 },
    METRICS_HOST: { type: 'string', minLength: 1, default: '127.0.0.1' },
    REDIS_URL: { type: 'string', pattern: '^rediss?://' },
    NODE_ID: { type: 'string', pattern: '^[a-z0-9]{1,16}$' },
    REDIS_PREFIX: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,32}$', default: 'bridge' },
    OTEL_EXPORTER_OTLP_ENDPOINT: { type: 'string', pattern: '^https?://' },
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { type: 'string', pattern: '^https?://' },
    OTEL_SERVICE_NAME: { type: 'string', minLength: 1, default: 'agent-messaging-bridge' },
    OTEL_TRACES_SAMPLER: {
      type: 'string',
      enum: ['parentbased_always_on', 'parentbased_traceidratio', 'always_on', 'traceidratio', 'always_off'],
      default: 'parentbased_always_on',
    },
    OTEL_TRACES_SAMPLER_ARG: { type: 'number', minimum: 0, maximum: 1, default: 1 },
    OTEL_BSP_MAX_QUEUE_SIZE: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 2048 },
    OTEL_BSP_SCHEDULE_DELAY: { type: 'integer', minimum: 1, maximum: MAX_TIMER_MS, default: 5000 },
  },
} as const;

/** Every variable the bridge reads (test harnesses blank them so a parent's environment cannot leak in). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(SCHEMA.properties);

export class ConfigError extends Error {}

type Property = {
  type?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  pattern?: string;
  enum?: readonly string[];
};
type Properties = typeof SCHEMA.properties;
/** A variable's value as env-schema returns it: its JSON type, or its enum's members. */
type ValueOf<P> = P extends { type: 'integer' | 'number' }
  ? number
  : P extends { enum: readonly (infer E)[] }
    ? E
    : string;
/** The variables with a default: always present in what env-schema returns. */
type Defaulted = { [K in keyof Properties]: Properties[K] extends { default: unknown } ? K : never }[keyof Properties];
/** What env-schema returns for SCHEMA: each variable given or defaulted, as its value. */
type RawEnv = { [K in Defaulted]: ValueOf<Properties[K]> } & {
  [K in Exclude<keyof Properties, Defaulted>]?: ValueOf<Properties[K]>;
};

type EnvError = Error & { errors?: { instancePath: string }[] };

/** What a variable may be, from its schema: "an integer from 1000 to 2147483647". */
function allowed(p: Property): string {
  if (p.enum) return `one of ${p.enum.filter(Boolean).join(', ')}`;
  if (p.minLength !== undefined) return `at least ${p.minLength} characters`;
  if (p.pattern !== undefined) return `a value matching ${p.pattern}`;
  const kind = p.type === 'integer' ? 'an integer' : 'a number';
  if (p.maximum === undefined) return `${kind} of at least ${p.minimum}`;
  return `${kind} from ${p.minimum ?? 0} to ${p.maximum}`;
}

/** What a value means, where its range alone would leave a reader guessing (`TRUST_PROXY=true`). */
const MEANING: Record<string, string> = {
  TRUST_PROXY: 'the number of reverse proxies in front of the bridge, 0 for none',
  REDIS_URL: 'redis://host:port or rediss://host:port',
  NODE_ID: '1 to 16 lowercase letters and digits',
  REDIS_PREFIX: '1 to 32 letters, digits, _ . or -',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'the OTLP/HTTP collector, such as http://collector:4318',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'the OTLP/HTTP URL for spans, such as http://collector:4318/v1/traces',
};

/**
 * One clause per wrong variable, naming it and its allowed values; a number is echoed back (a string could be a
 * secret such as ADMIN_TOKEN, so it is not).
 */
function explain(err: EnvError, given: Record<string, unknown>): string {
  const names = [...new Set((err.errors ?? []).map((e) => e.instancePath.replace(/^\//, '')))];
  const properties: Record<string, Property> = SCHEMA.properties;
  const known = names.filter((name) => name in properties);
  if (!known.length) return err.message.replace(/env\//g, '').replace(/\//g, '');
  return known
    .map((name) => {
      const p = properties[name]!;
      const got = p.type === 'integer' || p.type === 'number' ? `, got ${String(given[name])}` : '';
      return `${name} must be ${allowed(p)}${got}${MEANING[name] ? ` (${MEANING[name]})` : ''}`;
    })
    .join('; ');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Unset and empty mean the same: `ADMIN_TOKEN= npm start` turns the admin API off rather than failing.
  const given = Object.fromEntries(Object.entries(env).filter(([k, v]) => k in SCHEMA.properties && v !== ''));
  let raw: RawEnv;
  try {
    raw = envSchema<RawEnv>({ schema: structuredClone(SCHEMA) as unknown as object, data: given, env: false });
  } catch (err) {
    throw new ConfigError(
      `Invalid configuration: ${explain(err as EnvError, given)}. See the README's Configuration table.`,
    );
  }
  // One of the two alone would serve plain http while the operator believes it serves https.
  if (Boolean(raw.TLS_CERT_FILE) !== Boolean(raw.TLS_KEY_FILE)) {
    const [set, unset] = raw.TLS_CERT_FILE ? ['TLS_CERT_FILE', 'TLS_KEY_FILE'] : ['TLS_KEY_FILE', 'TLS_CERT_FILE'];
    throw new ConfigError(
      `Invalid configuration: ${set} is set but ${unset} is not; set both (https) or neither (http). See the README's Configuration table.`,
    );
  }
  return {
    port: raw.PORT,
    host: raw.HOST,
    databaseUrl: raw.DATABASE_URL,
    adminToken: raw.ADMIN_TOKEN,
    agentTimeoutMs: raw.AGENT_TIMEOUT_MS,
    logLevel: raw.LOG_LEVEL,
    logFormat: raw.LOG_FORMAT,
    testClock: raw.BRIDGE_TEST_CLOCK === '1' || raw.BRIDGE_TEST_CLOCK === 'true',
    rateLimitPerSecond: raw.RATE_LIMIT_EVENTS_PER_SECOND,
    rateLimitBurst: raw.RATE_LIMIT_BURST,
    fragmentsPerOrgPerSecond: raw.FRAGMENTS_PER_ORG_PER_SECOND,
    fragmentsPerOrgBurst: raw.FRAGMENTS_PER_ORG_BURST,
    discoversPerOrgPerSecond: raw.DISCOVERS_PER_ORG_PER_SECOND,
    discoversPerOrgBurst: raw.DISCOVERS_PER_ORG_BURST,
    resumesPerOrgPerSecond: raw.RESUMES_PER_ORG_PER_SECOND,
    resumesPerOrgBurst: raw.RESUMES_PER_ORG_BURST,
    resumeReplayBytesPerOrgPerSecond: raw.RESUME_REPLAY_BYTES_PER_ORG_PER_SECOND,
    resumeReplayBytesPerOrgBurst: raw.RESUME_REPLAY_BYTES_PER_ORG_BURST,
    eventLogRetentionDays: raw.EVENT_LOG_RETENTION_DAYS,
    auditLogRetentionDays: raw.AUDIT_LOG_RETENTION_DAYS,
    eventLogFlushMs: raw.EVENT_LOG_FLUSH_MS,
    eventLogQueueMaxRows: raw.EVENT_LOG_QUEUE_MAX_ROWS,
    eventLogCommitMaxRows: raw.EVENT_LOG_COMMIT_MAX_ROWS,
    shutdownTimeoutMs: raw.SHUTDOWN_TIMEOUT_MS,
    sendBufferMaxBytes: raw.SEND_BUFFER_MAX_BYTES,
    sendBufferPerAppMaxBytes: raw.SEND_BUFFER_PER_APP_MAX_BYTES,
    sendBufferPerAgentMaxBytes: raw.SEND_BUFFER_PER_AGENT_MAX_BYTES,
    sendBufferTotalMaxBytes: raw.SEND_BUFFER_TOTAL_MAX_BYTES,
    partialMessagesPerAppMaxBytes: raw.PARTIAL_MESSAGES_PER_APP_MAX_BYTES,
    partialMessagesPerAgentMaxBytes: raw.PARTIAL_MESSAGES_PER_AGENT_MAX_BYTES,
    partialMessagesTotalMaxBytes: raw.PARTIAL_MESSAGES_TOTAL_MAX_BYTES,
    partialMessageTimeoutMs: raw.PARTIAL_MESSAGE_TIMEOUT_MS,
    maxEventsInFlightPerApp: raw.MAX_EVENTS_IN_FLIGHT_PER_APP,
    maxEventsInFlightPerAgent: raw.MAX_EVENTS_IN_FLIGHT_PER_AGENT,
    maxEventsInFlight: raw.MAX_EVENTS_IN_FLIGHT,
    eventPayloadsMaxBytes: raw.EVENT_PAYLOADS_MAX_BYTES,
    streamedTextMaxBytes: raw.STREAMED_TEXT_MAX_BYTES,
    streamedTextPerAgentMaxBytes: raw.STREAMED_TEXT_MAX_BYTES_PER_AGENT,
    streamedTextTotalMaxBytes: raw.STREAMED_TEXT_TOTAL_MAX_BYTES,
    resumeBufferPerAppMaxBytes: raw.RESUME_BUFFER_PER_APP_MAX_BYTES,
    resumeBufferMaxBytes: raw.RESUME_BUFFER_MAX_BYTES,
    maxSessionsPerApp: raw.MAX_SESSIONS_PER_APP,
    maxSessions: raw.MAX_SESSIONS,
    maxConnections: raw.MAX_CONNECTIONS,
    maxConnectionsPerAddress: raw.MAX_CONNECTIONS_PER_ADDRESS,
    maxConnectionsPerApp: raw.MAX_CONNECTIONS_PER_APP,
    maxUnauthenticatedConnections: raw.MAX_UNAUTHENTICATED_CONNECTIONS,
    maxUnauthenticatedConnectionsPerAddress: raw.MAX_UNAUTHENTICATED_CONNECTIONS_PER_ADDRESS,
    wsPingAfterMs: raw.WS_PING_AFTER_MS,
    wsPongTimeoutMs: raw.WS_PONG_TIMEOUT_MS,
    tlsCertFile: raw.TLS_CERT_FILE,
    tlsKeyFile: raw.TLS_KEY_FILE,
    trustProxy: raw.TRUST_PROXY,
    metricsPort: raw.METRICS_PORT,
    metricsHost: raw.METRICS_HOST,
    redisUrl: raw.REDIS_URL,
    nodeId: raw.NODE_ID,
    redisPrefix: raw.REDIS_PREFIX,
    tracing: tracingOf(raw),
    unknownSettings: unknownSettings(env, CONFIG_VARIABLES),
  };
}

/** Tracing is on when a collector is named and the sampler is not `always_off`. */
function tracingOf(raw: RawEnv): TracingConfig | undefined {
  const base = raw.OTEL_EXPORTER_OTLP_ENDPOINT?.replace(/\/+$/, '');
  const url = raw.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base && `${base}/v1/traces`);
  if (!url || raw.OTEL_TRACES_SAMPLER === 'always_off') return undefined;
  return {
    url,
    serviceName: raw.OTEL_SERVICE_NAME,
    sampler: raw.OTEL_TRACES_SAMPLER,
    ratio: raw.OTEL_TRACES_SAMPLER_ARG,
    maxQueueSize: raw.OTEL_BSP_MAX_QUEUE_SIZE,
    scheduleDelayMs: raw.OTEL_BSP_SCHEDULE_DELAY,
  };
}
