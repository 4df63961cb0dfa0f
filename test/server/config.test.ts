// The environment is checked at start: defaults that run out of the box, and errors that name the variable.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { CONFIG_VARIABLES, ConfigError, MAX_TIMER_MS, loadConfig } from '../../src/config.js';
import { LIMITS } from '../../generated/index.js';
import { startTestBridge } from '../helpers/bridge.js';
import { capturedLog } from '../helpers/log.js';

describe('configuration from the environment', function () {
  it('runs with nothing set: port 8080 on localhost, SQLite under ./data, admin API off, test clock off', function () {
    expect(loadConfig({})).to.deep.equal({
      port: 8080,
      host: '127.0.0.1',
      databaseUrl: 'sqlite:./data/bridge.sqlite',
      adminToken: undefined,
      agentTimeoutMs: LIMITS.agentTimeoutMs,
      logLevel: 'info',
      logFormat: 'auto',
      testClock: false,
      rateLimitPerSecond: LIMITS.rateLimitEventsPerSecond,
      rateLimitBurst: LIMITS.rateLimitBurst,
      fragmentsPerOrgPerSecond: LIMITS.fragmentsPerOrgPerSecond,
      fragmentsPerOrgBurst: LIMITS.fragmentsPerOrgBurst,
      discoversPerOrgPerSecond: LIMITS.discoversPerOrgPerSecond,
      discoversPerOrgBurst: LIMITS.discoversPerOrgBurst,
      resumesPerOrgPerSecond: LIMITS.resumesPerOrgPerSecond,
      resumesPerOrgBurst: LIMITS.resumesPerOrgBurst,
      resumeReplayBytesPerOrgPerSecond: LIMITS.resumeReplayBytesPerOrgPerSecond,
      resumeReplayBytesPerOrgBurst: LIMITS.resumeReplayBytesPerOrgBurst,
      eventLogRetentionDays: 30,
      auditLogRetentionDays: 365,
      eventLogFlushMs: 20,
      eventLogQueueMaxRows: LIMITS.eventLogQueueMaxRows,
      eventLogCommitMaxRows: 10_000,
      shutdownTimeoutMs: 10_000,
      sendBufferMaxBytes: LIMITS.sendBufferMaxBytes,
      sendBufferPerAppMaxBytes: LIMITS.sendBufferPerAppMaxBytes,
      sendBufferPerAgentMaxBytes: LIMITS.sendBufferPerAgentMaxBytes,
      sendBufferTotalMaxBytes: LIMITS.sendBufferTotalMaxBytes,
      partialMessagesPerAppMaxBytes: LIMITS.partialMessagesPerAppMaxBytes,
      partialMessagesPerAgentMaxBytes: LIMITS.partialMessagesPerAgentMaxBytes,
      partialMessagesTotalMaxBytes: LIMITS.partialMessagesTotalMaxBytes,
      partialMessageTimeoutMs: LIMITS.partialMessageTimeoutMs,
      maxEventsInFlightPerApp: LIMITS.eventsInFlightPerAppMax,
      maxEventsInFlightPerAgent: LIMITS.eventsInFlightPerAgentMax,
      maxEventsInFlight: LIMITS.eventsInFlightMax,
      eventPayloadsMaxBytes: LIMITS.eventPayloadsMaxBytes,
      streamedTextMaxBytes: LIMITS.streamedTextMaxBytes,
      streamedTextPerAgentMaxBytes: LIMITS.streamedTextPerAgentMaxBytes,
      streamedTextTotalMaxBytes: LIMITS.streamedTextTotalMaxBytes,
      resumeBufferPerAppMaxBytes: LIMITS.resumeBufferPerAppMaxBytes,
      resumeBufferMaxBytes: LIMITS.resumeBufferMaxBytes,
      maxSessionsPerApp: LIMITS.sessionsPerAppMax,
      maxSessions: LIMITS.sessionsMax,
      maxConnections: LIMITS.connectionsMax,
      maxConnectionsPerAddress: LIMITS.connectionsPerAddressMax,
      maxConnectionsPerApp: LIMITS.connectionsPerAppMax,
      maxUnauthenticatedConnections: LIMITS.unauthenticatedConnectionsMax,
      maxUnauthenticatedConnectionsPerAddress: LIMITS.unauthenticatedConnectionsPerAddressMax,
      wsPingAfterMs: LIMITS.wsPingAfterMs,
      wsPongTimeoutMs: LIMITS.wsPongTimeoutMs,
      tlsCertFile: undefined,
      tlsKeyFile: undefined,
      trustProxy: 0,
      metricsPort: undefined,
      metricsHost: '127.0.0.1',
      redisUrl: undefined,
      nodeId: undefined,
      redisPrefix: 'bridge',
      tracing: undefined,
      unknownSettings: [],
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
      LOG_FORMAT: 'pretty',
      BRIDGE_TEST_CLOCK: '1',
      RATE_LIMIT_EVENTS_PER_SECOND: '2.5',
      RATE_LIMIT_BURST: '5',
      FRAGMENTS_PER_ORG_PER_SECOND: '500.5',
      FRAGMENTS_PER_ORG_BURST: '600',
      DISCOVERS_PER_ORG_PER_SECOND: '0',
      DISCOVERS_PER_ORG_BURST: '7',
      RESUMES_PER_ORG_PER_SECOND: '8',
      RESUMES_PER_ORG_BURST: '9',
      RESUME_REPLAY_BYTES_PER_ORG_PER_SECOND: '100000',
      RESUME_REPLAY_BYTES_PER_ORG_BURST: '200000',
      EVENT_LOG_RETENTION_DAYS: '7',
      AUDIT_LOG_RETENTION_DAYS: '90',
      EVENT_LOG_FLUSH_MS: '50',
      EVENT_LOG_QUEUE_MAX_ROWS: '5000',
      EVENT_LOG_COMMIT_MAX_ROWS: '2000',
      SHUTDOWN_TIMEOUT_MS: '3000',
      SEND_BUFFER_MAX_BYTES: '2097152',
      SEND_BUFFER_PER_APP_MAX_BYTES: '4194304',
      SEND_BUFFER_PER_AGENT_MAX_BYTES: '3145728',
      SEND_BUFFER_TOTAL_MAX_BYTES: '67108864',
      PARTIAL_MESSAGES_PER_APP_MAX_BYTES: '2000000',
      PARTIAL_MESSAGES_PER_AGENT_MAX_BYTES: '1500000',
      PARTIAL_MESSAGES_TOTAL_MAX_BYTES: '9000000',
      PARTIAL_MESSAGE_TIMEOUT_MS: '5000',
      MAX_EVENTS_IN_FLIGHT_PER_APP: '50',
      MAX_EVENTS_IN_FLIGHT_PER_AGENT: '60',
      MAX_EVENTS_IN_FLIGHT: '7000',
      EVENT_PAYLOADS_MAX_BYTES: '5000000',
      STREAMED_TEXT_MAX_BYTES: '70000',
      STREAMED_TEXT_MAX_BYTES_PER_AGENT: '8000000',
      STREAMED_TEXT_TOTAL_MAX_BYTES: '9000000',
      RESUME_BUFFER_PER_APP_MAX_BYTES: '2000000',
      RESUME_BUFFER_MAX_BYTES: '30000000',
      MAX_SESSIONS_PER_APP: '500',
      MAX_SESSIONS: '9000',
      MAX_CONNECTIONS: '3000',
      MAX_CONNECTIONS_PER_ADDRESS: '0',
      MAX_CONNECTIONS_PER_APP: '20',
      MAX_UNAUTHENTICATED_CONNECTIONS: '300',
      MAX_UNAUTHENTICATED_CONNECTIONS_PER_ADDRESS: '0',
      WS_PING_AFTER_MS: '0',
      WS_PONG_TIMEOUT_MS: '2500',
      TLS_CERT_FILE: '/etc/bridge/fullchain.pem',
      TLS_KEY_FILE: '/etc/bridge/privkey.pem',
      TRUST_PROXY: '2',
      METRICS_PORT: '9100',
      METRICS_HOST: '0.0.0.0',
      REDIS_URL: 'redis://redis.internal:6379',
      NODE_ID: 'b2',
      REDIS_PREFIX: 'bridge-b',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom/traces',
      OTEL_SERVICE_NAME: 'bridge-eu',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_BSP_SCHEDULE_DELAY: '250',
    });
    expect(config).to.deep.equal({
      port: 9000,
      host: '0.0.0.0',
      databaseUrl: 'sqlite:/tmp/x.sqlite',
      adminToken: 'a-long-enough-admin-token',
      agentTimeoutMs: 60000,
      logLevel: 'debug',
      logFormat: 'pretty',
      testClock: true,
      rateLimitPerSecond: 2.5,
      rateLimitBurst: 5,
      fragmentsPerOrgPerSecond: 500.5,
      fragmentsPerOrgBurst: 600,
      discoversPerOrgPerSecond: 0,
      discoversPerOrgBurst: 7,
      resumesPerOrgPerSecond: 8,
      resumesPerOrgBurst: 9,
      resumeReplayBytesPerOrgPerSecond: 100000,
      resumeReplayBytesPerOrgBurst: 200000,
      eventLogRetentionDays: 7,
      auditLogRetentionDays: 90,
      eventLogFlushMs: 50,
      eventLogQueueMaxRows: 5000,
      eventLogCommitMaxRows: 2000,
      shutdownTimeoutMs: 3000,
      sendBufferMaxBytes: 2097152,
      sendBufferPerAppMaxBytes: 4194304,
      sendBufferPerAgentMaxBytes: 3145728,
      sendBufferTotalMaxBytes: 67108864,
      partialMessagesPerAppMaxBytes: 2000000,
      partialMessagesPerAgentMaxBytes: 1500000,
      partialMessagesTotalMaxBytes: 9000000,
      partialMessageTimeoutMs: 5000,
      maxEventsInFlightPerApp: 50,
      maxEventsInFlightPerAgent: 60,
      maxEventsInFlight: 7000,
      eventPayloadsMaxBytes: 5000000,
      streamedTextMaxBytes: 70000,
      streamedTextPerAgentMaxBytes: 8000000,
      streamedTextTotalMaxBytes: 9000000,
      resumeBufferPerAppMaxBytes: 2000000,
      resumeBufferMaxBytes: 30000000,
      maxSessionsPerApp: 500,
      maxSessions: 9000,
      maxConnections: 3000,
      maxConnectionsPerAddress: 0,
      maxConnectionsPerApp: 20,
      maxUnauthenticatedConnections: 300,
      maxUnauthenticatedConnectionsPerAddress: 0,
      wsPingAfterMs: 0,
      wsPongTimeoutMs: 2500,
      tlsCertFile: '/etc/bridge/fullchain.pem',
      tlsKeyFile: '/etc/bridge/privkey.pem',
      trustProxy: 2,
      metricsPort: 9100,
      metricsHost: '0.0.0.0',
      redisUrl: 'redis://redis.internal:6379',
      nodeId: 'b2',
      redisPrefix: 'bridge-b',
      tracing: {
        url: 'http://collector:4318/custom/traces',
        serviceName: 'bridge-eu',
        sampler: 'parentbased_traceidratio',
        ratio: 0.25,
        maxQueueSize: 100,
        scheduleDelayMs: 250,
      },
      unknownSettings: [],
    });
  });

  it('takes TLS_CERT_FILE and TLS_KEY_FILE together or not at all, naming the one missing', function () {
    expect(() => loadConfig({ TLS_CERT_FILE: '/etc/bridge/fullchain.pem' })).to.throw(
      ConfigError,
      "Invalid configuration: TLS_CERT_FILE is set but TLS_KEY_FILE is not; set both (https) or neither (http). See the README's Configuration table.",
    );
    expect(() => loadConfig({ TLS_KEY_FILE: '/etc/bridge/privkey.pem', TLS_CERT_FILE: '' })).to.throw(
      ConfigError,
      'TLS_KEY_FILE is set but TLS_CERT_FILE is not',
    );
  });

  it('says what TRUST_PROXY counts when it is not a number of proxies (true is refused: it would believe any client)', function () {
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).to.throw(
      ConfigError,
      "Invalid configuration: TRUST_PROXY must be an integer from 0 to 10, got true (the number of reverse proxies in front of the bridge, 0 for none). See the README's Configuration table.",
    );
    expect(loadConfig({ TRUST_PROXY: '10' })).to.have.property('trustProxy', 10);
    expect(() => loadConfig({ TRUST_PROXY: '11' })).to.throw(
      ConfigError,
      'TRUST_PROXY must be an integer from 0 to 10, got 11',
    );
  });

  it("has every variable it reads in the server README's Configuration table, and no other", function () {
    const readme = readFileSync(new URL('../../packages/server/README.md', import.meta.url), 'utf8');
    const table = readme.split('\n## Configuration\n')[1]!.split('\n## ')[0]!;
    const documented = [...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented).to.have.members([...CONFIG_VARIABLES]);
  });

  it('takes REDIS_URL, NODE_ID and REDIS_PREFIX for a node of several, and refuses a URL of another scheme without echoing it (it may hold a password)', function () {
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', NODE_ID: 'n1', REDIS_PREFIX: 'eu.bridge' })).to.include({
      redisUrl: 'redis://127.0.0.1:6379',
      nodeId: 'n1',
      redisPrefix: 'eu.bridge',
    });
    expect(() => loadConfig({ REDIS_PREFIX: 'bridge:a' })).to.throw(
      ConfigError,
      'REDIS_PREFIX must be a value matching ^[A-Za-z0-9_.-]{1,32}$ (1 to 32 letters, digits, _ . or -)',
    );
    expect(() => loadConfig({ REDIS_URL: 'http://u:secret@redis:6379' })).to.throw(
      ConfigError,
      'REDIS_URL must be a value matching ^rediss?:// (redis://host:port or rediss://host:port)',
    );
    expect(() => loadConfig({ REDIS_URL: 'http://u:secret@redis:6379' })).to.not.throw(/secret/);
    expect(() => loadConfig({ NODE_ID: 'Node 1' })).to.throw(
      ConfigError,
      'NODE_ID must be a value matching ^[a-z0-9]{1,16}$ (1 to 16 lowercase letters and digits)',
    );
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
    ['EVENT_LOG_QUEUE_MAX_ROWS', '0'],
    ['SEND_BUFFER_MAX_BYTES', '1000'],
    ['TRUST_PROXY', 'true'],
    ['METRICS_PORT', '-1'],
  ] as const) {
    it(`refuses ${name}=${value} with a message that names ${name}`, function () {
      expect(() => loadConfig({ [name]: value })).to.throw(ConfigError, name);
    });
  }

  describe('bounds: the lowest and highest value of each setting, and one step beyond each', function () {
    const SUFFIX = ". See the README's Configuration table.";
    const refusal = (name: string, rule: string, got: string) =>
      `Invalid configuration: ${name} must be ${rule}, got ${got}${SUFFIX}`;

    it('knows the longest timer delay of Node.js: 2^31 - 1 ms (a longer one fires after 1 ms)', function () {
      expect(MAX_TIMER_MS).to.equal(2147483647);
    });

    // Every duration: a Node.js timer takes at most MAX_TIMER_MS; the other helper's settings are caught by name.
    const durations = CONFIG_VARIABLES.filter((name) => name.endsWith('_MS'));
    it('has the duration settings', function () {
      expect(durations).to.include.members(['AGENT_TIMEOUT_MS', 'SHUTDOWN_TIMEOUT_MS', 'EVENT_LOG_FLUSH_MS']);
    });
    for (const name of durations) {
      it(`refuses ${name}=2147483648 (a timer would fire after 1 ms), naming it and its range`, function () {
        expect(() => loadConfig({ [name]: '2147483648' }))
          .to.throw(ConfigError)
          .with.property('message')
          .that.matches(
            new RegExp(`^Invalid configuration: ${name} must be an integer from \\d+ to (\\d+), got 2147483648\\.`),
          )
          .and.satisfies((message: string) => Number(/ to (\d+),/.exec(message)![1]) <= MAX_TIMER_MS);
      });
    }

    const RANGES: [name: string, key: string, low: number, high: number, step: number][] = [
      ['PORT', 'port', 0, 65535, 1],
      ['AGENT_TIMEOUT_MS', 'agentTimeoutMs', 1000, 2147483647, 1],
      ['SHUTDOWN_TIMEOUT_MS', 'shutdownTimeoutMs', 100, 2147483647, 1],
      ['EVENT_LOG_FLUSH_MS', 'eventLogFlushMs', 1, 100, 1],
      ['RATE_LIMIT_EVENTS_PER_SECOND', 'rateLimitPerSecond', 0, 1_000_000, 0.5],
      ['RATE_LIMIT_BURST', 'rateLimitBurst', 0, 1_000_000, 1],
      ['EVENT_LOG_RETENTION_DAYS', 'eventLogRetentionDays', 0, 3650, 1],
      ['AUDIT_LOG_RETENTION_DAYS', 'auditLogRetentionDays', 0, 3650, 1],
      ['EVENT_LOG_QUEUE_MAX_ROWS', 'eventLogQueueMaxRows', 1_000, 10_000_000, 1],
      ['EVENT_LOG_COMMIT_MAX_ROWS', 'eventLogCommitMaxRows', 100, 1_000_000, 1],
      ['SEND_BUFFER_MAX_BYTES', 'sendBufferMaxBytes', LIMITS.frameMaxBytes, 1_073_741_824, 1],
      ['MAX_EVENTS_IN_FLIGHT_PER_APP', 'maxEventsInFlightPerApp', 1, 1_000_000, 1],
      ['MAX_EVENTS_IN_FLIGHT_PER_AGENT', 'maxEventsInFlightPerAgent', 1, 1_000_000, 1],
      ['MAX_EVENTS_IN_FLIGHT', 'maxEventsInFlight', 1, 10_000_000, 1],
      ['STREAMED_TEXT_MAX_BYTES', 'streamedTextMaxBytes', 0, LIMITS.replyContentMaxBytes, 1],
      ['STREAMED_TEXT_MAX_BYTES_PER_AGENT', 'streamedTextPerAgentMaxBytes', 0, 2 ** 32, 1],
      ['STREAMED_TEXT_TOTAL_MAX_BYTES', 'streamedTextTotalMaxBytes', 0, 2 ** 36, 1],
      ['RESUME_BUFFER_PER_APP_MAX_BYTES', 'resumeBufferPerAppMaxBytes', LIMITS.frameMaxBytes, 2 ** 36, 1],
      ['RESUME_BUFFER_MAX_BYTES', 'resumeBufferMaxBytes', LIMITS.frameMaxBytes, 2 ** 36, 1],
      ['METRICS_PORT', 'metricsPort', 0, 65535, 1],
    ];
    for (const [name, key, low, high, step] of RANGES) {
      const rule = `${step === 1 ? 'an integer' : 'a number'} from ${low} to ${high}`;
      it(`accepts ${name}=${low} and ${name}=${high}`, function () {
        expect(loadConfig({ [name]: String(low) })).to.have.property(key, low);
        expect(loadConfig({ [name]: String(high) })).to.have.property(key, high);
      });
      it(`refuses ${name}=${low - step} and ${name}=${high + step} with "${name} must be ${rule}"`, function () {
        for (const value of [low - step, high + step]) {
          expect(() => loadConfig({ [name]: String(value) })).to.throw(ConfigError, refusal(name, rule, String(value)));
        }
      });
    }

    it('names every wrong variable in one line, and never echoes a string (ADMIN_TOKEN could be a secret)', function () {
      let message = '';
      try {
        loadConfig({ AGENT_TIMEOUT_MS: '2147483648', SHUTDOWN_TIMEOUT_MS: '2147483648', ADMIN_TOKEN: 'secret-ish' });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).to.equal(
        'Invalid configuration: ADMIN_TOKEN must be at least 16 characters; ' +
          'AGENT_TIMEOUT_MS must be an integer from 1000 to 2147483647, got 2147483648; ' +
          `SHUTDOWN_TIMEOUT_MS must be an integer from 100 to 2147483647, got 2147483648${SUFFIX}`,
      );
      expect(message).not.to.include('\n');
    });
  });

  it('names the variables that look like settings but are none: a misspelling, BRIDGE_…, or a family of settings', function () {
    const env = {
      ADMIN_TOKN: 'secret',
      EVENT_LOG_RETENTION: '3',
      BRIDGE_TESTCLOCK: '1',
      MAX_EVENTS_IN_FLIGHT_PER_ORG: '5',
      RATE_LIMIT: '10',
      LOG_LEVL: 'debug',
      PATH: '/bin',
      HOME: '/root',
      NODE_ENV: 'production',
      REDIS_HOST: 'redis',
      PORT: '80',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer x',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
    };
    expect(loadConfig(env).unknownSettings).to.deep.equal([
      { name: 'ADMIN_TOKN', meant: 'ADMIN_TOKEN' },
      { name: 'BRIDGE_TESTCLOCK', meant: 'BRIDGE_TEST_CLOCK' },
      { name: 'EVENT_LOG_RETENTION' },
      { name: 'LOG_LEVL', meant: 'LOG_LEVEL' },
      { name: 'MAX_EVENTS_IN_FLIGHT_PER_ORG' },
      { name: 'RATE_LIMIT' },
    ]);
    expect(loadConfig({}).unknownSettings).to.deep.equal([]);
  });

  it('traces when a collector is named: the traces URL, else the base URL with /v1/traces; never with always_off', function () {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example:4318/' }).tracing).to.include({
      url: 'https://otel.example:4318/v1/traces',
      serviceName: 'agent-messaging-bridge',
      sampler: 'parentbased_always_on',
      ratio: 1,
    });
    const off = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER: 'always_off' };
    expect(loadConfig(off).tracing).to.equal(undefined);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).to.throw(
      ConfigError,
      'OTEL_EXPORTER_OTLP_ENDPOINT must be a value matching ^https?:// (the OTLP/HTTP collector, such as http://collector:4318)',
    );
  });

  it('warns at start of each, by name, never with its value', async function () {
    const { log, lines } = capturedLog('warn');
    const { unknownSettings } = loadConfig({ ADMIN_TOKN: 'hunter2-secret', BRIDGE_FOO: 'x' });
    await startTestBridge({ unknownSettings }, { log });
    const warned = lines().filter((l) => l.variable);
    expect(warned.map((l) => l.msg)).to.deep.equal([
      'ADMIN_TOKN is not a setting of the bridge: ignored; did you mean ADMIN_TOKEN?',
      'BRIDGE_FOO is not a setting of the bridge: ignored',
    ]);
    expect(JSON.stringify(lines())).not.to.include('hunter2');
  });
});
