// §2.6: the connector's configuration file — ${VAR} interpolation before validation, readable errors, defaults.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import {
  ConnectorConfigError,
  interpolateEnv,
  loadConnectorConfig,
  parseConnectorConfig,
  resolveConnectorConfig,
} from '../../src/sdk/connector/config.js';

const TOKEN = 'rla_tutor-7k2m_Zx8kQ2mV7pL4nR9sT1wY6bC3dF5gH0jK2aE4iO8uQ1z';
const URL = 'ws://127.0.0.1:9/v1/ws/agent';

const YAML = `
connection:
  url: \${BRIDGE_AGENT_URL}
agents:
  - agent_id: tutor-7k2m
    token: \${TUTOR_TOKEN}
    ttl_days: 30
    context:
      persona: patient maths tutor
      greeting: Hello \${STUDENT}!
`;

function thrown(fn: () => unknown): ConnectorConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ConnectorConfigError);
    return err as ConnectorConfigError;
  }
  throw new Error('expected a ConnectorConfigError');
}

describe('connector configuration', function () {
  let dir: string;
  before(async function () {
    dir = await mkdtemp(join(tmpdir(), 'connector-config-'));
  });
  after(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  it('interpolates ${VAR} in string values from the environment, in YAML and JSON files', async function () {
    const env = { BRIDGE_AGENT_URL: URL, TUTOR_TOKEN: TOKEN, STUDENT: 'Ada' };
    const yamlFile = join(dir, 'connector.yaml');
    await writeFile(yamlFile, YAML);
    const fromYaml = await loadConnectorConfig(yamlFile, env);
    expect(fromYaml.connection.url).to.equal(URL);
    expect(fromYaml.agents[0]).to.deep.equal({
      agent_id: 'tutor-7k2m',
      token: TOKEN,
      ttl_days: 30,
      context: { persona: 'patient maths tutor', greeting: 'Hello Ada!' },
    });

    const jsonFile = join(dir, 'connector.json');
    await writeFile(
      jsonFile,
      JSON.stringify({
        connection: { url: '${BRIDGE_AGENT_URL}' },
        agents: [{ agent_id: 'tutor-7k2m', token: '${TUTOR_TOKEN}' }],
      }),
    );
    const fromJson = await loadConnectorConfig(jsonFile, env);
    expect(fromJson.agents[0]!.token).to.equal(TOKEN);
  });

  it('interpolates after parsing, so a value never changes the document, and $${ writes a literal ${', function () {
    const config = parseConnectorConfig(YAML, {
      env: { BRIDGE_AGENT_URL: URL, TUTOR_TOKEN: TOKEN, STUDENT: 'x\n    injected: true # ${NOT_A_REF}' },
    });
    expect(config.agents[0]!.context).to.deep.equal({
      persona: 'patient maths tutor',
      greeting: 'Hello x\n    injected: true # ${NOT_A_REF}!',
    });
    expect(interpolateEnv({ a: ['cost: $${PRICE}', 'plain $ sign'] }, {})).to.deep.equal({
      a: ['cost: ${PRICE}', 'plain $ sign'],
    });
  });

  it('refuses a missing or empty variable at start-up, naming it, the field and the file', async function () {
    const file = join(dir, 'missing.yaml');
    await writeFile(file, YAML);
    let error: Error | undefined;
    try {
      await loadConnectorConfig(file, { BRIDGE_AGENT_URL: URL, STUDENT: 'Ada' });
    } catch (err) {
      error = err as Error;
    }
    expect(error).to.be.instanceOf(ConnectorConfigError);
    expect(error!.message)
      .to.include('TUTOR_TOKEN')
      .and.include('agents[0].token')
      .and.include(file)
      .and.include('not set');

    const empty = thrown(() =>
      parseConnectorConfig(YAML, { env: { BRIDGE_AGENT_URL: URL, TUTOR_TOKEN: '', STUDENT: 'Ada' }, source: 'c.yaml' }),
    );
    expect(empty.message).to.equal(
      'agents[0].token in c.yaml: environment variable TUTOR_TOKEN is empty (referenced as ${TUTOR_TOKEN})',
    );

    expect(thrown(() => interpolateEnv({ a: 'x ${1BAD}' }, {})).message).to.include(
      '${1BAD} is not a valid environment variable name',
    );
    expect(thrown(() => interpolateEnv({ a: 'x ${OPEN' }, {})).message).to.include('unclosed');
  });

  it('validates with the generated schema and says which field is wrong', function () {
    const base = { connection: { url: URL }, agents: [{ agent_id: 'tutor-7k2m', token: TOKEN }] };
    const cases: [unknown, string][] = [
      [
        { ...base, connection: { url: 'http://bridge/v1/ws/agent' } },
        'connection.url: has characters that are not allowed',
      ],
      [{ ...base, conection: {} }, 'conection: is not a field of this message'],
      [{ ...base, agents: [{ agent_id: 'tutor-7k2m', token: 'secret' }] }, 'agents.0.token'],
      [{ ...base, agents: [] }, 'agents: must NOT have fewer than 1 items'],
      [
        { connection: { url: URL, reconnect: { maxRetries: -2 } }, agents: base.agents },
        'connection.reconnect.maxRetries: must be >= -1',
      ],
      [
        { connection: { url: URL, reconnect: { maxRetries: 1.5 } }, agents: base.agents },
        'connection.reconnect.maxRetries',
      ],
      [{ ...base, agents: [{ agent_id: 'tutor-7k2m', token: TOKEN, ttl_days: 0 }] }, 'agents.0.ttl_days'],
      [{ connection: base.connection }, 'agents: is required'],
    ];
    for (const [document, expected] of cases) {
      const error = thrown(() => resolveConnectorConfig(document, { env: {}, source: 'connector.yaml' }));
      expect(error.message).to.include('invalid connector configuration in connector.yaml').and.include(expected);
    }
  });

  it('refuses a token of another agent and an agent listed twice', function () {
    const other = 'rla_other-1_Zx8kQ2mV7pL4nR9sT1wY6bC3dF5gH0jK2aE4iO8uQ1z';
    expect(
      thrown(() =>
        resolveConnectorConfig(
          { connection: { url: URL }, agents: [{ agent_id: 'tutor-7k2m', token: other }] },
          { env: {} },
        ),
      ).message,
    ).to.include('agents[0].token in the configuration: the token belongs to agent other-1, not tutor-7k2m');
    const twice = {
      connection: { url: URL },
      agents: [
        { agent_id: 'tutor-7k2m', token: TOKEN },
        { agent_id: 'tutor-7k2m', token: TOKEN },
      ],
    };
    expect(thrown(() => resolveConnectorConfig(twice, { env: {} })).message)
      .to.include('agents[1].agent_id')
      .and.include('listed twice');
  });

  it('applies the defaults of §2.6 (the protocol limits), and keeps what the file gives', function () {
    const config = resolveConnectorConfig(
      { connection: { url: URL }, agents: [{ agent_id: 'tutor-7k2m', token: TOKEN }], health: { port: 0 } },
      { env: {} },
    );
    expect(config).to.deep.equal({
      connection: { url: URL, reconnect: { enabled: true, maxRetries: 5, baseDelayMs: 1000, maxDelayMs: 60000 } },
      agents: [{ agent_id: 'tutor-7k2m', token: TOKEN, ttl_days: 14, context: {} }],
      health: { port: 0, path: '/health', host: '127.0.0.1' },
    });
    expect(config.connection.reconnect.maxRetries).to.equal(LIMITS.connectorReconnectMaxAttempts);
    expect(config.agents[0]!.ttl_days).to.equal(LIMITS.sessionTtlDefaultDays);

    const given = resolveConnectorConfig(
      {
        connection: { url: URL, reconnect: { enabled: false, maxRetries: 2, baseDelayMs: 10, maxDelayMs: 20 } },
        agents: [{ agent_id: 'tutor-7k2m', token: TOKEN, ttl_days: 30 }],
        health: { port: 8787, path: '/hz' },
      },
      { env: {} },
    );
    expect(given.connection.reconnect).to.deep.equal({
      enabled: false,
      maxRetries: 2,
      baseDelayMs: 10,
      maxDelayMs: 20,
    });
    expect(given.agents[0]!.ttl_days).to.equal(30);
    const forever = resolveConnectorConfig(
      { connection: { url: URL, reconnect: { maxRetries: -1 } }, agents: [{ agent_id: 'tutor-7k2m', token: TOKEN }] },
      { env: {} },
    );
    expect(forever.connection.reconnect.maxRetries, 'reconnect for ever (C7)').to.equal(-1);
    expect(given.health).to.deep.equal({ port: 8787, path: '/hz', host: '127.0.0.1' });
    const everywhere = resolveConnectorConfig(
      {
        connection: { url: URL },
        agents: [{ agent_id: 'tutor-7k2m', token: TOKEN }],
        health: { port: 8787, host: '0.0.0.0' },
      },
      { env: {} },
    );
    expect(everywhere.health).to.deep.equal({ port: 8787, path: '/health', host: '0.0.0.0' });
  });

  it('reports an unreadable or unparsable file clearly', async function () {
    let error: Error | undefined;
    await loadConnectorConfig(join(dir, 'nope.yaml'), {}).catch((err: Error) => (error = err));
    expect(error).to.be.instanceOf(ConnectorConfigError);
    expect(error!.message).to.include('cannot read the connector configuration').and.include('nope.yaml');
    expect(
      thrown(() => parseConnectorConfig('{"connection": ', { format: 'json', source: 'c.json' })).message,
    ).to.match(/^c\.json is not valid JSON/);
  });
});
