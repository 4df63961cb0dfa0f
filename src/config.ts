// The server's configuration, from the environment, validated at start with a message that names the variable.
import envSchema from 'env-schema';
import { LIMITS } from '../generated/index.js';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  adminToken: string | undefined;
  agentTimeoutMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  testClock: boolean;
  /** Per-app token bucket refill; 0 turns the rate limit off. */
  rateLimitPerSecond: number;
  /** Per-app token bucket size; 0 turns the rate limit off. */
  rateLimitBurst: number;
  /** Event log rows older than this are deleted by the hourly sweep; 0 keeps them forever. */
  eventLogRetentionDays: number;
  /** The event log's group-commit window. */
  eventLogFlushMs: number;
  /** A graceful shutdown gives up waiting after this long. */
  shutdownTimeoutMs: number;
  /** Bytes queued for one connection that it has not read yet; beyond them it is closed (SLOW_CONSUMER). */
  sendBufferMaxBytes: number;
}

const SCHEMA = {
  type: 'object',
  properties: {
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
    HOST: { type: 'string', minLength: 1, default: '127.0.0.1' },
    DATABASE_URL: { type: 'string', minLength: 1, default: 'sqlite:./data/bridge.sqlite' },
    ADMIN_TOKEN: { type: 'string', minLength: 16 },
    AGENT_TIMEOUT_MS: { type: 'integer', minimum: 1000, default: LIMITS.agentTimeoutMs },
    LOG_LEVEL: { type: 'string', enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
    BRIDGE_TEST_CLOCK: { type: 'string', enum: ['0', '1', 'true', 'false', ''], default: '0' },
    RATE_LIMIT_EVENTS_PER_SECOND: { type: 'number', minimum: 0, default: LIMITS.rateLimitEventsPerSecond },
    RATE_LIMIT_BURST: { type: 'integer', minimum: 0, default: LIMITS.rateLimitBurst },
    EVENT_LOG_RETENTION_DAYS: { type: 'integer', minimum: 0, default: 30 },
    EVENT_LOG_FLUSH_MS: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    SHUTDOWN_TIMEOUT_MS: { type: 'integer', minimum: 100, default: 10_000 },
    SEND_BUFFER_MAX_BYTES: { type: 'integer', minimum: LIMITS.frameMaxBytes, default: LIMITS.sendBufferMaxBytes },
  },
} as const;

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Unset and empty mean the same: `ADMIN_TOKEN= npm start` turns the admin API off rather than failing.
  const given = Object.fromEntries(Object.entries(env).filter(([k, v]) => k in SCHEMA.properties && v !== ''));
  let raw: Record<string, any>;
  try {
    raw = envSchema({ schema: structuredClone(SCHEMA) as any, data: given, env: false });
  } catch (err) {
    const text = (err as Error).message.replace(/env\//g, '').replace(/\//g, '');
    throw new ConfigError(`Invalid configuration: ${text}. See the README's Configuration table.`);
  }
  return {
    port: raw.PORT,
    host: raw.HOST,
    databaseUrl: raw.DATABASE_URL,
    adminToken: raw.ADMIN_TOKEN,
    agentTimeoutMs: raw.AGENT_TIMEOUT_MS,
    logLevel: raw.LOG_LEVEL,
    testClock: raw.BRIDGE_TEST_CLOCK === '1' || raw.BRIDGE_TEST_CLOCK === 'true',
    rateLimitPerSecond: raw.RATE_LIMIT_EVENTS_PER_SECOND,
    rateLimitBurst: raw.RATE_LIMIT_BURST,
    eventLogRetentionDays: raw.EVENT_LOG_RETENTION_DAYS,
    eventLogFlushMs: raw.EVENT_LOG_FLUSH_MS,
    shutdownTimeoutMs: raw.SHUTDOWN_TIMEOUT_MS,
    sendBufferMaxBytes: raw.SEND_BUFFER_MAX_BYTES,
  };
}
