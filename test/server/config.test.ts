// The environment is checked at start: defaults that run out of the box, and errors that name the variable.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';
import { LIMITS } from '../../generated/index.js';

describe('configuration from the environment', function () {
  it('runs with nothing set: port 8080 on localhost, SQLite under ./data, admin API off, test clock off', function () {
    expect(loadConfig({})).to.deep.equal({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'sqlite:./data/bridge.sqlite',
      adminToken: undefined,
      agentTimeoutMs: LIMITS.agentTimeoutMs,
      logLevel: 'info',
      testClock: false,
      rateLimitPerSecond: LIMITS.rateLimitEventsPerSecond,
      rateLimitBurst: LIMITS.rateLimitBurst,
      eventLogRetentionDays: 30,
      eventLogFlushMs: 20,
      shutdownTimeoutMs: 10_000,
      sendBufferMaxBytes: LIMITS.sendBufferMaxBytes,
    });
  });

  it('reads every variable', function () {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      DATABASE_URL: 'sqlite:/tmp/x.sqlite',
      ADMIN_TOKEN: 'a-long-enough-admin-token',
      AGENT_TIMEOUT_MS: '60000',
      LOG_LEVEL: 'debug',
      BRIDGE_TEST_CLOCK: '1',
      RATE_LIMIT_EVENTS_PER_SECOND: '2.5',
      RATE_LIMIT_BURST: '5',
      EVENT_LOG_RETENTION_DAYS: '7',
      EVENT_LOG_FLUSH_MS: '50',
      SHUTDOWN_TIMEOUT_MS: '3000',
      SEND_BUFFER_MAX_BYTES: '2097152',
    });
    expect(config).to.deep.equal({
      port: 9000,
      host: '0.0.0.0',
      databaseUrl: 'sqlite:/tmp/x.sqlite',
      adminToken: 'a-long-enough-admin-token',
      agentTimeoutMs: 60000,
      logLevel: 'debug',
      testClock: true,
      rateLimitPerSecond: 2.5,
      rateLimitBurst: 5,
      eventLogRetentionDays: 7,
      eventLogFlushMs: 50,
      shutdownTimeoutMs: 3000,
      sendBufferMaxBytes: 2097152,
    });
  });

  it('treats an empty variable as unset', function () {
    expect(loadConfig({ ADMIN_TOKEN: '', PORT: '' })).to.include({ adminToken: undefined, port: 8080 });
  });

  for (const [name, value] of [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['ADMIN_TOKEN', 'short'],
    ['AGENT_TIMEOUT_MS', '10'],
    ['LOG_LEVEL', 'loud'],
    ['BRIDGE_TEST_CLOCK', 'yes'],
    ['RATE_LIMIT_EVENTS_PER_SECOND', '-1'],
    ['RATE_LIMIT_BURST', '1.5'],
    ['EVENT_LOG_FLUSH_MS', '500'],
    ['EVENT_LOG_RETENTION_DAYS', 'forever'],
    ['SEND_BUFFER_MAX_BYTES', '1000'],
  ] as const) {
    it(`refuses ${name}=${value} with a message that names ${name}`, function () {
      expect(() => loadConfig({ [name]: value })).to.throw(ConfigError, name);
    });
  }
});
