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
    });
    expect(config).to.deep.equal({
      port: 9000,
      host: '0.0.0.0',
      databaseUrl: 'sqlite:/tmp/x.sqlite',
      adminToken: 'a-long-enough-admin-token',
      agentTimeoutMs: 60000,
      logLevel: 'debug',
      testClock: true,
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
  ] as const) {
    it(`refuses ${name}=${value} with a message that names ${name}`, function () {
      expect(() => loadConfig({ [name]: value })).to.throw(ConfigError, name);
    });
  }
});
