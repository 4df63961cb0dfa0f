// The store (L5, DATABASE_URL), on SQLite and on PostgreSQL: registrations survive a restart and tokens are kept
// only as SHA-256 hashes; an SQLite file is created with its folder and journalled with WAL; a bad DATABASE_URL says
// what is wrong, and never shows a password.
import { createHash } from 'node:crypto';
import { testConfig } from '../helpers/bridge.js';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import knexFactory, { type Knex } from 'knex';
import { validators } from '../../generated/index.js';
import { startServer, type RunningBridge } from '../../src/server.js';
import { openDatabase } from '../../src/store/database.js';
import { SQLITE_MIN_VERSION, sqliteTooOld } from '../../src/store/sqlite.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { startEvent } from '../helpers/events.js';
import { TestClient } from '../helpers/ws-client.js';

const ADMIN = 'store-test-admin-token-0123456789';
/** Every table of the schema (knex's own bookkeeping aside). */
const TABLES = ['organizations', 'apps', 'agents', 'agent_allowlist', 'tokens', 'sessions', 'events', 'admin_audit'];

/** Bridges and clients of one test, on the database `databaseUrl()` names; all closed after it. */
function harness(databaseUrl: () => string) {
  const servers: RunningBridge[] = [];
  const clients: TestClient<any>[] = [];

  afterEach(async function () {
    for (const c of clients.splice(0)) c.close();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function start(): Promise<RunningBridge> {
    const server = await startServer(testConfig({ databaseUrl: databaseUrl(), adminToken: ADMIN, logLevel: 'silent' }));
    servers.push(server);
    return server;
  }

  async function stop(server: RunningBridge): Promise<void> {
    await server.close();
    servers.splice(servers.indexOf(server), 1);
  }

  async function http(
    server: RunningBridge,
    method: string,
    path: string,
    body: unknown,
    schema: keyof typeof validators,
  ): Promise<any> {
    const response = await fetch(new URL(path, server.url), {
      method,
      headers: {
        authorization: `Bearer ${ADMIN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const parsed = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(parsed)}`);
    if (!validators[schema](parsed))
      throw new Error(`${method} ${path} answered an invalid ${schema}: ${JSON.stringify(parsed)}`);
    return parsed;
  }

  async function connect(server: RunningBridge, kind: 'app' | 'agent', token: string): Promise<TestClient<any>> {
    const client = await TestClient.connect(server.url, kind, token);
    clients.push(client);
    return client;
  }

  /** An organization with two apps and one agent whose allowlist names only the first app. */
  async function provision(server: RunningBridge) {
    const org = await http(server, 'POST', '/admin/v1/organizations', { name: 'Acme Learning' }, 'Organization');
    const app = await http(
      server,
      'POST',
      `/admin/v1/organizations/${org.org_id}/apps`,
      { name: 'Classroom' },
      'AppCreated',
    );
    const other = await http(
      server,
      'POST',
      `/admin/v1/organizations/${org.org_id}/apps`,
      { name: 'Other' },
      'AppCreated',
    );
    const agent = await http(
      server,
      'POST',
      `/admin/v1/organizations/${org.org_id}/agents`,
      { name: 'Math Tutor', description: 'Explains maths.', ttl_days: 30 },
      'AgentCreated',
    );
    await http(server, 'PUT', `/admin/v1/agents/${agent.agent_id}/allowlist`, { app_ids: [app.app_id] }, 'Agent');
    return { org, app, other, agent };
  }

  async function lists(server: RunningBridge, orgId: string) {
    return {
      organizations: await http(server, 'GET', '/admin/v1/organizations', undefined, 'OrganizationList'),
      apps: await http(server, 'GET', `/admin/v1/organizations/${orgId}/apps`, undefined, 'AppList'),
      agents: await http(server, 'GET', `/admin/v1/organizations/${orgId}/agents`, undefined, 'AgentList'),
    };
  }

  return { start, stop, http, connect, provision, lists };
}

describeEachDatabase('the store', function (db) {
  const { start, stop, http, connect, provision, lists } = harness(db.url);

  it('keeps organizations, apps, agents, tokens and allowlists across a restart', async function () {
    const first = await start();
    const { org, app, other, agent } = await provision(first);
    // Ids that a locale's collation sorts otherwise than byte by byte (en_US ignores hyphens: class-z-… after
    // classa-…): the allowlist keeps its order across the restart whatever the database's collation.
    const more = [];
    for (const name of ['Class Z', 'Classa'])
      more.push(await http(first, 'POST', `/admin/v1/organizations/${org.org_id}/apps`, { name }, 'AppCreated'));
    await http(
      first,
      'PUT',
      `/admin/v1/agents/${agent.agent_id}/allowlist`,
      { app_ids: [app.app_id, ...more.map((a) => a.app_id)] },
      'Agent',
    );
    const before = await lists(first, org.org_id);
    expect(before.agents.agents[0].allowlist).to.deep.equal([app.app_id, ...more.map((a) => a.app_id)].sort());
    await stop(first);

    const second = await start();
    expect(await lists(second, org.org_id)).to.deep.equal(before);

    const agentClient = await connect(second, 'agent', agent.token);
    const appClient = await connect(second, 'app', app.token);
    const otherClient = await connect(second, 'app', other.token);

    await startEvent(appClient, agentClient, agent.agent_id, 't', { q: 1 });

    otherClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    expect(await otherClient.expect('error')).to.include({ code: 'PERMISSION_DENIED', agent_id: agent.agent_id });
  });

  it('stores tokens only as SHA-256 hashes', async function () {
    const server = await start();
    const { app, other, agent } = await provision(server);
    await stop(server);

    const knex = await db.open();
    const tokens = [app.token, other.token, agent.token] as string[];
    const secrets = tokens.map((t) => t.slice(t.lastIndexOf('_') + 1));
    let cells = 0;
    for (const name of TABLES) {
      for (const row of await knex(name).select()) {
        for (const value of Object.values(row)) {
          cells++;
          const text = Buffer.isBuffer(value) ? value.toString('latin1') + value.toString('hex') : String(value);
          for (const secret of secrets) expect(text, `${name}`).not.to.include(secret);
        }
      }
    }
    expect(cells).to.be.greaterThan(0);

    const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
    for (const [token, owner] of [
      [app.token, app.app_id],
      [other.token, other.app_id],
      [agent.token, agent.agent_id],
    ] as const) {
      const rows = await knex('tokens').where({ owner_id: owner }).select('hash');
      expect(rows.map((r: { hash: string }) => r.hash)).to.deep.equal([sha256(token)]);
    }
  });
});

describe('the SQLite store', function () {
  let dir: string;
  const knexes: Knex[] = [];
  const file = () => join(dir, 'nested', 'bridge.sqlite');
  const { start, stop, provision } = harness(() => `sqlite:${file()}`);

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'bridge-store-'));
  });

  afterEach(async function () {
    await Promise.all(knexes.splice(0).map((k) => k.destroy()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the folder of its file and journals the file with WAL', async function () {
    const server = await start();
    expect(existsSync(join(dir, 'nested'))).to.equal(true);
    await provision(server);
    await stop(server);

    const knex = knexFactory({ client: 'sqlite3', connection: { filename: file() }, useNullAsDefault: true });
    knexes.push(knex);
    const tables: { name: string }[] = await knex.raw("SELECT name FROM sqlite_master WHERE type = 'table'");
    expect(tables.map((t) => t.name)).to.include.members(TABLES);
    const [mode] = await knex.raw('PRAGMA journal_mode');
    expect(mode).to.deep.equal({ journal_mode: 'wal' });
  });
});

describe('DATABASE_URL', function () {
  const failure = async (url: string) => {
    try {
      const db = await openDatabase(url);
      await db.destroy();
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error(`openDatabase(${url}) did not fail`);
  };

  it('says clearly what is wrong with one it cannot use, and never shows a password', async function () {
    expect(await failure('mysql://x')).to.include('sqlite:<path> or postgres://user:password@host:port/database');
    const leaky = await failure('mysql://bridge:hunter2@db.example.com/bridge');
    expect(leaky).to.include('mysql://bridge:***@db.example.com/bridge').and.not.to.include('hunter2');
    expect(await failure('sqlite:'))
      .to.match(/DATABASE_URL/)
      .and.match(/path/);
    // Nothing listens on port 1: the error names the server, its password hidden, and PostgreSQL's reason.
    for (const scheme of ['postgres', 'postgresql']) {
      const refused = await failure(`${scheme}://bridge:hunter2@127.0.0.1:1/bridge?sslmode=disable&password=hunter2`);
      expect(refused).to.equal(
        `cannot open the database ${scheme}://bridge:***@127.0.0.1:1/bridge?sslmode=disable&password=***: connect ECONNREFUSED 127.0.0.1:1`,
      );
    }
  });
});

describe('the SQLite library', function () {
  it(`is refused below ${SQLITE_MIN_VERSION} (the event log's JSONB commits), and the one installed is not`, async function () {
    expect(['3.40.1', '3.44.9', '2.99.99'].filter(sqliteTooOld)).to.have.length(3);
    expect(['3.45.0', '3.45', '3.52.0', '4.0.0'].filter(sqliteTooOld)).to.deep.equal([]);
    const knex = await openDatabase('sqlite::memory:');
    try {
      const [{ version }] = await knex.raw('SELECT sqlite_version() AS version');
      expect(sqliteTooOld(version), version).to.equal(false);
    } finally {
      await knex.destroy();
    }
  });
});
