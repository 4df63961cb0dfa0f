// What only the PostgreSQL store has to get right (the rest runs on both databases in the other store tests): a
// whole event through a bridge on PostgreSQL, its rows as written; bigint columns read back as numbers; nodes of a
// shared database migrating together; connections PostgreSQL drops; and the password in DATABASE_URL never shown.
import { expect } from 'chai';
import pg from 'pg';
import { AdjustableClock } from '../../src/shared/clock.js';
import { startServer, type RunningBridge } from '../../src/server.js';
import { connectDatabase, openDatabase } from '../../src/store/database.js';
import { ADMIN_TOKEN, testConfig } from '../helpers/bridge.js';
import { describePostgres } from '../helpers/databases.js';
import { exchange, startEvent } from '../helpers/events.js';
import { httpJson } from '../helpers/http.js';
import { capturedLog } from '../helpers/log.js';
import { TestClient, type AgentClient, type AppClient } from '../helpers/ws-client.js';

const START = Date.parse('2026-11-22T12:00:00.000Z');
const PASSWORD = 'hunter2-not-for-logs';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describePostgres('the PostgreSQL store', function (db) {
  let bridge: RunningBridge | undefined;
  const clients: TestClient<any>[] = [];
  /** The test database's URL with a password (the test server trusts local connections, so any will do). */
  const withPassword = () => Object.assign(new URL(db.url()), { password: PASSWORD }).toString();

  afterEach(async function () {
    for (const c of clients.splice(0)) c.close();
    await bridge?.close();
    bridge = undefined;
  });

  async function start(log = capturedLog()) {
    const clock = new AdjustableClock({ frozen: true, start: START });
    bridge = await startServer(testConfig({ databaseUrl: withPassword() }), { clock, log: log.log });
    return { bridge, clock, ...log };
  }

  const admin = async (path: string, body: object) =>
    (await httpJson(bridge!.url, 'POST', path, { token: ADMIN_TOKEN, body })).body;

  async function pair() {
    const org = await admin('/admin/v1/organizations', { name: 'Pg Org' });
    const app = await admin(`/admin/v1/organizations/${org.org_id}/apps`, { name: 'Pg App' });
    const agent = await admin(`/admin/v1/organizations/${org.org_id}/agents`, { name: 'Pg Agent' });
    const agentClient = (await TestClient.connect(bridge!.url, 'agent', agent.token)) as AgentClient;
    const appClient = (await TestClient.connect(bridge!.url, 'app', app.token)) as AppClient;
    clients.push(agentClient, appClient);
    return { org, app, agent, agentClient, appClient };
  }

  it('writes the rows of a whole event flow (event, session, a rejection) with their types, and logs the database without its password', async function () {
    const { clock, lines } = await start();
    const { app, agent, agentClient, appClient } = await pair();

    const { event_id, session_key } = await startEvent(appClient, agentClient, agent.agent_id, 'lesson-1', {
      q: 'What is a prime?',
    });
    clock.advance(1_250);
    agentClient.send({ type: 'token', event_id, token: 'Two ' });
    agentClient.send({ type: 'reply', event_id, content: 'Two divisors.', done: true, metadata: { tokens_used: 12 } });
    await appClient.expect('token');
    await appClient.expect('reply');
    appClient.send({ type: 'event', agent_id: 'no-such-agent', thread_id: 'lesson-1', payload: {} });
    const rejected = await appClient.expect('error');
    await bridge!.writer.flush();

    const knex = await db.open();
    expect(await knex('events').select().orderBy('event_id')).to.deep.equal([
      {
        event_id,
        app_id: app.app_id,
        agent_id: agent.agent_id,
        thread_id: 'lesson-1',
        session_key,
        status: 'delivered',
        outcome: 'replied',
        code: null,
        payload_bytes: Buffer.byteLength(JSON.stringify({ q: 'What is a prime?' })),
        tokens_used: 12,
        received_at: START,
        completed_at: START + 1_250,
        latency_ms: 1_250,
      },
      {
        event_id: rejected.event_id,
        app_id: app.app_id,
        agent_id: 'no-such-agent',
        thread_id: 'lesson-1',
        session_key: null,
        status: 'rejected',
        outcome: 'rejected',
        code: 'AGENT_NOT_FOUND',
        payload_bytes: 2,
        tokens_used: null,
        received_at: START + 1_250,
        completed_at: START + 1_250,
        latency_ms: 0,
      },
    ]);
    expect(await knex('sessions').select()).to.deep.equal([
      {
        session_key,
        agent_id: agent.agent_id,
        app_id: app.app_id,
        thread_id: 'lesson-1',
        created_at: START,
        expires_at: START + 14 * 86_400_000,
      },
    ]);

    const listening = lines().find((l) => l.msg === 'bridge listening');
    expect(listening.database).to.equal(Object.assign(new URL(db.url()), { password: '***' }).toString());
    expect(JSON.stringify(lines())).not.to.include(PASSWORD);
  });

  it('reads bigint columns back as numbers, on every connection of the pool', async function () {
    await start();
    await pair();
    const knex = connectDatabase(db.url());
    try {
      // More queries at once than the pool has connections: each connection parses int8 the same way.
      const reads = await Promise.all(
        Array.from({ length: 8 }, () => knex('tokens').select('created_at', 'expires_at')),
      );
      for (const rows of reads)
        expect(rows).to.deep.equal([
          { created_at: START, expires_at: null },
          { created_at: START, expires_at: null },
        ]);
      const [{ n, biggest }] = (
        await knex.raw('SELECT count(*) AS n, 9007199254740991::bigint AS biggest FROM "organizations"')
      ).rows;
      expect({ n, biggest }).to.deep.equal({ n: 1, biggest: Number.MAX_SAFE_INTEGER });
      // pg's own parsers are left alone for anything else in the process.
      expect(pg.types.getTypeParser(20)('5')).to.equal('5');
    } finally {
      await knex.destroy();
    }
  });

  it('migrates a fresh database once when the nodes sharing it start together', async function () {
    const starts = await Promise.allSettled(Array.from({ length: 3 }, () => openDatabase(db.url())));
    const nodes = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      expect(
        starts.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : [])),
        'failed starts',
      ).to.deep.equal([]);
      const done = await nodes[0]!('knex_migrations').select('name').orderBy('id');
      expect(done.map((m) => m.name)).to.deep.equal([
        '001_registry',
        '002_sessions_and_event_log',
        '003_events_pending',
        '004_postgres_tokens_used',
        '005_admin_audit',
        '006_dashboard_sign_ins',
      ]);
    } finally {
      await Promise.all(nodes.map((k) => k.destroy()));
    }
  });

  it('goes on logging events after PostgreSQL ends its connections, and says the database lock went with them', async function () {
    const { lines } = await start();
    const { agent, agentClient, appClient } = await pair();
    const { event_id: before } = await exchange(appClient, agentClient, agent.agent_id);
    await bridge!.writer.flush();

    // What a restart of the server or an administrator's pg_terminate_backend does to the bridge's sessions.
    const killer = connectDatabase(db.url());
    try {
      await killer.raw(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
    } finally {
      await killer.destroy();
    }
    for (let i = 0; i < 100 && !lines().some((l) => l.level === 50); i++) await sleep(20);
    expect(
      lines()
        .filter((l) => l.level === 50)
        .map((l) => l.msg),
    ).to.deep.equal([
      'the connection holding the database lock was lost; restart this bridge so that it holds the lock again',
    ]);

    const { event_id: after } = await exchange(appClient, agentClient, agent.agent_id);
    // A pooled connection whose end the driver has not read yet fails the first commit; its rows wait for the retry.
    await bridge!.writer.flush();
    for (let i = 0; i < 100 && bridge!.writer.pending; i++) {
      await sleep(20);
      await bridge!.writer.flush();
    }
    const res = await httpJson(bridge!.url, 'GET', '/admin/v1/events', { token: ADMIN_TOKEN, schema: 'EventLog' });
    expect(res.body.events.map((e: any) => [e.event_id, e.outcome])).to.deep.equal([
      [after, 'replied'],
      [before, 'replied'],
    ]);
    expect(JSON.stringify(lines())).not.to.include(PASSWORD);
  });
});
