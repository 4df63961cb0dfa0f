// The event log (GET /admin/v1/events): one row per app event with how it ended, never the payload; filters and
// paging; written in group commits off the per-message path; old rows deleted by the hourly retention sweep.
import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import type { Config } from '../../src/config.js';
import { SWEEP_INTERVAL_MS } from '../../src/server.js';
import { silentLogger, type Logger } from '../../src/shared/logger.js';
import { DAY_MS, iso } from '../../src/shared/time.js';
import { WriteBehind, type EventRow } from '../../src/store/write-behind.js';
import { startTestBridge, type TestBridge, disconnect } from '../helpers/bridge.js';
import { lockAgainstWriters } from '../helpers/database-outage.js';
import { describeEachDatabase, type TestDatabase } from '../helpers/databases.js';
import { exchange, startEvent } from '../helpers/events.js';
import type { AppClient } from '../helpers/ws-client.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const bytes = (payload: unknown) => Buffer.byteLength(JSON.stringify(payload), 'utf8');

async function events(bridge: TestBridge, query = ''): Promise<{ events: any[]; next_before: string | null }> {
  const res = await bridge.http('GET', `/admin/v1/events${query}`, { schema: 'EventLog' });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body;
}

async function entry(bridge: TestBridge, eventId: string): Promise<any> {
  const found = (await events(bridge, '?limit=500')).events.filter((e) => e.event_id === eventId);
  expect(found, `rows of ${eventId}`).to.have.length(1);
  return found[0];
}

/** Whether another session can write to the event log now, asked without waiting. */
async function canWrite(db: TestDatabase): Promise<boolean> {
  const knex = await db.open();
  const attempt = db.postgres
    ? knex.transaction(async (trx) => {
        await trx.raw('SET LOCAL lock_timeout = 50');
        await trx.raw('LOCK TABLE "events" IN ROW EXCLUSIVE MODE');
      })
    : knex.raw('PRAGMA busy_timeout = 0').then(() => knex.raw('CREATE TABLE lock_probe (x integer)'));
  return attempt.then(
    () => true,
    () => false,
  );
}

describeEachDatabase('the event log', function (db) {
  const start = (overrides: Partial<Config> = {}) => startTestBridge({ databaseUrl: db.url(), ...overrides });

  describe('one row per app event', function () {
    it("logs a replied event: delivered, replied, the reply's tokens_used, the payload size, times and latency from the bridge clock", async function () {
      const bridge = await start();
      const { app, agent, appClient, agentClient } = await bridge.pair();
      const payload = { text: 'Grüße, 世界 ✓', list: [1, 2.5, null], nested: { deep: true } };
      bridge.clock.advance(3_000);
      const receivedAt = bridge.clock.now();
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'lesson-42', payload });
      const accepted = await appClient.expect('accepted');
      await agentClient.expect('event');
      for (const token of ['one ', 'two ', 'three'])
        agentClient.send({ type: 'token', event_id: accepted.event_id, token });
      bridge.clock.advance(4_250);
      agentClient.send({
        type: 'reply',
        event_id: accepted.event_id,
        content: '',
        done: true,
        metadata: { tokens_used: 187, model: 'm' },
      });
      for (let i = 0; i < 3; i++) await appClient.expect('token');
      expect((await appClient.expect('reply')).metadata.tokens_used).to.equal(187);

      expect(await events(bridge)).to.deep.equal({
        events: [
          {
            event_id: accepted.event_id,
            app_id: app.app_id,
            agent_id: agent.agent_id,
            thread_id: 'lesson-42',
            session_key: accepted.session_key,
            status: 'delivered',
            outcome: 'replied',
            code: null,
            payload_bytes: bytes(payload),
            tokens_used: 187,
            received_at: iso(receivedAt),
            completed_at: iso(receivedAt + 4_250),
            latency_ms: 4_250,
          },
        ],
        next_before: null,
      });
    });

    it('logs the number of fragments forwarded as tokens_used when the agent gives none', async function () {
      const bridge = await start();
      const { agent, appClient, agentClient } = await bridge.pair();
      const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
      for (const token of ['a', 'b', 'c', 'd']) agentClient.send({ type: 'token', event_id, token });
      agentClient.send({ type: 'reply', event_id, content: '', done: true });
      for (let i = 0; i < 4; i++) await appClient.expect('token');
      expect((await appClient.expect('reply')).metadata.tokens_used).to.equal(4);
      expect(await entry(bridge, event_id)).to.include({ outcome: 'replied', tokens_used: 4, payload_bytes: 2 });
    });

    it('logs each rejection the rate limit let through with its code, newest first; counts the others without a row (O1)', async function () {
      const bridge = await start();
      const { org, app, agent, appClient } = await bridge.pair();
      const forbidden = await bridge.agent(org.org_id, 'Private');
      await bridge.http('PUT', `/admin/v1/agents/${forbidden.agent_id}/allowlist`, {
        body: { app_ids: [] },
        schema: 'Agent',
      });
      const offline = await bridge.agent(org.org_id, 'Sleeper');
      bridge.clock.advance(1_000);
      const at = bridge.clock.now();

      const longBadId = 'Not_An_Agent-'.repeat(10);
      const longThread = 'x'.repeat(LIMITS.threadIdMaxChars + 30);
      const big = { s: 'a'.repeat(LIMITS.payloadMaxBytes) };
      const cases = [
        {
          frame: { agent_id: longBadId, thread_id: 't1', payload: { a: 1 } },
          code: 'INVALID_AGENT_ID',
          agent_id: longBadId.slice(0, LIMITS.idMaxChars),
          thread_id: 't1',
        },
        { frame: { thread_id: 't2', payload: {} }, code: 'INVALID_AGENT_ID', agent_id: '', thread_id: 't2' },
        {
          frame: { agent_id: agent.agent_id, thread_id: longThread, payload: {} },
          code: 'INVALID_THREAD_ID',
          agent_id: agent.agent_id,
          thread_id: longThread.slice(0, LIMITS.threadIdMaxChars),
        },
        {
          frame: { agent_id: agent.agent_id, thread_id: 'big', payload: big },
          code: 'PAYLOAD_TOO_LARGE',
          agent_id: agent.agent_id,
          thread_id: 'big',
        },
        {
          frame: { agent_id: 'no-such-agent', thread_id: 't3', payload: { b: 'é' } },
          code: 'AGENT_NOT_FOUND',
          agent_id: 'no-such-agent',
          thread_id: 't3',
        },
        {
          frame: { agent_id: forbidden.agent_id, thread_id: 't4', payload: {} },
          code: 'PERMISSION_DENIED',
          agent_id: forbidden.agent_id,
          thread_id: 't4',
        },
        {
          frame: { agent_id: offline.agent_id, thread_id: 't5', payload: {} },
          code: 'AGENT_OFFLINE',
          agent_id: offline.agent_id,
          thread_id: 't5',
        },
      ];
      const ids: string[] = [];
      for (const c of cases) {
        appClient.send({ type: 'event', ...c.frame });
        const error = await appClient.expect('error');
        expect(error.code, c.code).to.equal(c.code);
        ids.push(error.event_id!);
      }

      // Refused before the rate limit (shape, size): answered, counted, but never a row, so a flood of bad frames
      // cannot grow the log faster than the app's rate.
      const beforeTheLimit = ['INVALID_AGENT_ID', 'INVALID_THREAD_ID', 'PAYLOAD_TOO_LARGE'];
      const log = await events(bridge);
      expect(log.next_before).to.equal(null);
      const logged = cases.map((c, i) => ({ ...c, id: ids[i]! })).filter((c) => !beforeTheLimit.includes(c.code));
      expect(log.events.map((e) => e.event_id)).to.deep.equal(logged.map((c) => c.id).reverse());
      const metrics = await (await fetch(new URL('/metrics', bridge.url))).text();
      expect(metrics).to.include('bridge_events_not_logged_total{code="INVALID_AGENT_ID"} 2');
      expect(metrics).to.include('bridge_events_not_logged_total{code="INVALID_THREAD_ID"} 1');
      expect(metrics).to.include('bridge_events_not_logged_total{code="PAYLOAD_TOO_LARGE"} 1');
      logged.forEach((c, i) => {
        expect(log.events[logged.length - 1 - i], c.code).to.deep.equal({
          event_id: c.id,
          app_id: app.app_id,
          agent_id: c.agent_id,
          thread_id: c.thread_id,
          session_key: null,
          status: 'rejected',
          outcome: 'rejected',
          code: c.code,
          payload_bytes: bytes(c.frame.payload),
          tokens_used: null,
          received_at: iso(at),
          completed_at: iso(at),
          latency_ms: 0,
        });
      });
    });

    it("logs an agent's error as agent_error / AGENT_ERROR and its AGENT_TIMEOUT as agent_timeout / AGENT_TIMEOUT", async function () {
      const bridge = await start();
      const { agent, appClient, agentClient } = await bridge.pair();
      const ends = [
        { agentCode: 'MODEL_OVERLOADED', code: 'AGENT_ERROR', outcome: 'agent_error' },
        { agentCode: 'AGENT_ERROR', code: 'AGENT_ERROR', outcome: 'agent_error' },
        { agentCode: 'AGENT_TIMEOUT', code: 'AGENT_TIMEOUT', outcome: 'agent_timeout' },
      ];
      for (const end of ends) {
        const receivedAt = bridge.clock.now();
        const { event_id, session_key } = await startEvent(appClient, agentClient, agent.agent_id);
        bridge.clock.advance(700);
        agentClient.send({ type: 'error', event_id, code: end.agentCode, error: 'It went wrong.' });
        expect(await appClient.expect('error')).to.include({ event_id, code: end.code });
        expect(await entry(bridge, event_id), end.agentCode).to.deep.include({
          session_key,
          status: 'delivered',
          outcome: end.outcome,
          code: end.code,
          tokens_used: null,
          received_at: iso(receivedAt),
          completed_at: iso(receivedAt + 700),
          latency_ms: 700,
        });
      }
    });

    it('logs an event the agent did not answer within the agent timeout as agent_timeout / AGENT_TIMEOUT', async function () {
      const bridge = await start({ agentTimeoutMs: 5_000 });
      const { agent, appClient, agentClient } = await bridge.pair();
      const receivedAt = bridge.clock.now();
      const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
      bridge.clock.advance(5_000);
      expect(await appClient.expect('error')).to.include({ event_id, code: 'AGENT_TIMEOUT' });
      expect(await entry(bridge, event_id)).to.deep.include({
        status: 'delivered',
        outcome: 'agent_timeout',
        code: 'AGENT_TIMEOUT',
        completed_at: iso(receivedAt + 5_000),
        latency_ms: 5_000,
      });
    });

    it('logs an event whose agent dropped and did not come back within the grace as agent_offline / AGENT_OFFLINE', async function () {
      const bridge = await start();
      const { agent, appClient, agentClient } = await bridge.pair();
      const receivedAt = bridge.clock.now();
      const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
      agentClient.send({ type: 'token', event_id, token: 'Half ' });
      await appClient.expect('token');
      agentClient.close();
      await bridge.untilAgentOnline(agent.agent_id, false);
      expect(await entry(bridge, event_id)).to.include({ outcome: 'pending', code: null });

      bridge.clock.advance(LIMITS.agentReconnectGraceMs);
      expect(await appClient.expect('error')).to.include({ event_id, code: 'AGENT_OFFLINE' });
      expect(await entry(bridge, event_id)).to.deep.include({
        status: 'delivered',
        outcome: 'agent_offline',
        code: 'AGENT_OFFLINE',
        tokens_used: null,
        completed_at: iso(receivedAt + LIMITS.agentReconnectGraceMs),
        latency_ms: LIMITS.agentReconnectGraceMs,
      });
    });

    it('shows an accepted event as pending (no completion yet), then as replied once the reply went out', async function () {
      const bridge = await start();
      const { app, agent, appClient, agentClient } = await bridge.pair();
      const receivedAt = bridge.clock.now();
      const { event_id, session_key } = await startEvent(appClient, agentClient, agent.agent_id, 'later', { q: '?' });
      const pending = {
        event_id,
        app_id: app.app_id,
        agent_id: agent.agent_id,
        thread_id: 'later',
        session_key,
        status: 'delivered',
        outcome: 'pending',
        code: null,
        payload_bytes: bytes({ q: '?' }),
        tokens_used: null,
        received_at: iso(receivedAt),
        completed_at: null,
        latency_ms: null,
      };
      expect(await entry(bridge, event_id)).to.deep.equal(pending);

      bridge.clock.advance(60_000);
      agentClient.send({ type: 'reply', event_id, content: 'Done.', done: true });
      await appClient.expect('reply');
      expect(await entry(bridge, event_id)).to.deep.equal({
        ...pending,
        outcome: 'replied',
        tokens_used: 0,
        completed_at: iso(receivedAt + 60_000),
        latency_ms: 60_000,
      });
    });
  });

  it('never stores the payload, only its size', async function () {
    const marker = `secret-marker-${Math.random().toString(36).slice(2)}`;
    const bridge = await start();
    const { org, agent, appClient, agentClient } = await bridge.pair();
    const offline = await bridge.agent(org.org_id, 'Sleeper');
    const payload = { note: marker, [marker]: [marker, { inner: `x${marker}x` }] };

    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload });
    const { event_id } = await appClient.expect('accepted');
    expect((await agentClient.expect('event')).payload).to.deep.equal(payload);
    agentClient.send({ type: 'reply', event_id, content: 'ok', done: true });
    expect((await appClient.expect('reply')).payload).to.deep.equal(payload);
    appClient.send({ type: 'event', agent_id: offline.agent_id, thread_id: 't', payload });
    expect((await appClient.expect('error')).code).to.equal('AGENT_OFFLINE');
    appClient.send({ type: 'event', agent_id: 'no-such-agent', thread_id: 't', payload });
    expect((await appClient.expect('error')).code).to.equal('AGENT_NOT_FOUND');

    const api = await events(bridge);
    expect(api.events).to.have.length(3);
    expect(JSON.stringify(api)).not.to.include(marker);
    for (const e of api.events) expect(e.payload_bytes).to.equal(bytes(payload));
    await bridge.close();

    const knex = await db.open();
    const rows: Record<string, unknown>[] = await knex('events').select();
    expect(rows).to.have.length(3);
    for (const row of rows) {
      for (const [column, value] of Object.entries(row))
        expect(String(value), `events.${column}`).not.to.include(marker);
    }
    await knex.destroy();
    if (!db.postgres) {
      const file = db.url().slice('sqlite:'.length);
      for (const path of [file, `${file}-wal`]) {
        if (existsSync(path)) expect(readFileSync(path).includes(marker), path).to.equal(false);
      }
    }
  });

  describe('reading', function () {
    /** Two apps and two agents of one organization, and a mix of delivered and rejected events. */
    async function mixedLog(bridge: TestBridge) {
      const { org, app, agent, appClient, agentClient } = await bridge.pair();
      const other = await bridge.app(org.org_id, 'Other App');
      const otherClient = await bridge.connectApp(other.token);
      const ids = {
        replied: [] as string[],
        notFound: [] as string[],
        offline: [] as string[],
        denied: [] as string[],
      };
      const offline = await bridge.agent(org.org_id, 'Sleeper');
      const denying = await bridge.agent(org.org_id, 'Private');
      await bridge.http('PUT', `/admin/v1/agents/${denying.agent_id}/allowlist`, {
        body: { app_ids: [] },
        schema: 'Agent',
      });
      const reject = async (client: AppClient, agentId: string, code: string) => {
        client.send({ type: 'event', agent_id: agentId, thread_id: 't', payload: {} });
        const error = await client.expect('error');
        expect(error.code).to.equal(code);
        return error.event_id!;
      };
      for (let i = 0; i < 3; i++) {
        ids.replied.push((await exchange(appClient, agentClient, agent.agent_id, `a${i}`)).event_id);
        ids.replied.push((await exchange(otherClient, agentClient, agent.agent_id, `b${i}`)).event_id);
        ids.notFound.push(await reject(appClient, 'ghost', 'AGENT_NOT_FOUND'));
        ids.notFound.push(await reject(otherClient, 'ghost', 'AGENT_NOT_FOUND'));
        ids.offline.push(await reject(appClient, offline.agent_id, 'AGENT_OFFLINE'));
        ids.denied.push(await reject(otherClient, denying.agent_id, 'PERMISSION_DENIED'));
        bridge.clock.advance(10);
      }
      return { app, other, agent, offline, denying, ids };
    }

    it('filters by app_id, agent_id, status and code, combined', async function () {
      const bridge = await start();
      const { app, other, agent, offline, denying, ids } = await mixedLog(bridge);
      const idsOf = async (query: string) => (await events(bridge, query)).events.map((e) => e.event_id);
      const newestFirst = (list: string[]) => [...list].sort().reverse();
      const all = newestFirst(Object.values(ids).flat());
      expect(all).to.have.length(18);
      expect(await idsOf('')).to.deep.equal(all);

      const appRows = (await events(bridge, `?app_id=${app.app_id}`)).events;
      expect(appRows).to.have.length(9);
      expect(appRows.every((e) => e.app_id === app.app_id)).to.equal(true);

      expect(await idsOf(`?agent_id=${agent.agent_id}`)).to.deep.equal(newestFirst(ids.replied));
      expect(await idsOf('?agent_id=ghost')).to.deep.equal(newestFirst(ids.notFound));
      expect(await idsOf(`?agent_id=${denying.agent_id}`)).to.deep.equal(newestFirst(ids.denied));
      expect(await idsOf('?status=delivered')).to.deep.equal(newestFirst(ids.replied));
      expect(await idsOf('?status=rejected')).to.deep.equal(
        newestFirst([...ids.notFound, ...ids.offline, ...ids.denied]),
      );
      expect(await idsOf('?code=AGENT_OFFLINE')).to.deep.equal(newestFirst(ids.offline));

      const appNotFound = (
        await events(bridge, `?app_id=${app.app_id}&status=rejected&code=AGENT_NOT_FOUND&agent_id=ghost`)
      ).events;
      expect(appNotFound).to.have.length(3);
      for (const e of appNotFound)
        expect(e).to.include({ app_id: app.app_id, agent_id: 'ghost', status: 'rejected', code: 'AGENT_NOT_FOUND' });
      expect(await idsOf(`?app_id=${other.app_id}&status=delivered&agent_id=${agent.agent_id}`)).to.have.length(3);
      expect(await idsOf(`?app_id=${other.app_id}&agent_id=${offline.agent_id}`)).to.deep.equal([]);
      expect(await idsOf('?status=delivered&code=AGENT_NOT_FOUND')).to.deep.equal([]);
    });

    it('pages with limit and before/next_before, newest first, every row exactly once', async function () {
      const bridge = await start();
      const { ids } = await mixedLog(bridge);
      const all = Object.values(ids).flat().sort().reverse();

      for (const limit of [1, 4, 5, 18, 500]) {
        const seen: string[] = [];
        let before: string | null = null;
        let pages = 0;
        do {
          const page: { events: any[]; next_before: string | null } = await events(
            bridge,
            `?limit=${limit}${before ? `&before=${before}` : ''}`,
          );
          expect(page.events.length, `limit ${limit}`).to.be.at.most(limit).and.at.least(1);
          if (page.next_before !== null)
            expect(page.next_before).to.equal(page.events[page.events.length - 1].event_id);
          seen.push(...page.events.map((e) => e.event_id));
          before = page.next_before;
          pages++;
        } while (before !== null && pages < 100);
        expect(seen, `limit ${limit}`).to.deep.equal(all);
        expect(pages, `limit ${limit}`).to.equal(Math.ceil(all.length / limit));
      }

      // Paging works with filters too; without a limit, a page holds 100.
      const rejected = await events(bridge, '?status=rejected&limit=4');
      expect(rejected.events).to.have.length(4);
      const rest = await events(bridge, `?status=rejected&before=${rejected.next_before}`);
      expect([...rejected.events, ...rest.events].map((e) => e.event_id)).to.deep.equal(
        [...ids.notFound, ...ids.offline, ...ids.denied].sort().reverse(),
      );
      expect(rest.next_before).to.equal(null);
      expect((await events(bridge, `?before=${all[all.length - 1]}`)).events).to.deep.equal([]);
    });

    it('answers 400 INVALID_REQUEST to invalid query values', async function () {
      const bridge = await start();
      for (const query of [
        'limit=0',
        'limit=501',
        'limit=x',
        'limit=1.5',
        'limit=-3',
        'status=lost',
        'code=NOPE',
        'before=not%20an%20id',
        'app_id=Bad_App',
      ]) {
        const res = await bridge.http('GET', `/admin/v1/events?${query}`);
        expect(res.status, query).to.equal(400);
        expect(res.body.code, query).to.equal('INVALID_REQUEST');
      }
      for (const query of ['limit=1', 'limit=500', 'status=rejected', 'code=PERMISSION_DENIED']) {
        expect((await bridge.http('GET', `/admin/v1/events?${query}`, { schema: 'EventLog' })).status, query).to.equal(
          200,
        );
      }
    });
  });

  describe('writing', function () {
    it('keeps relaying while the database is locked: accepted, tokens and reply all reach the app, and the row is written once it is free', async function () {
      const bridge = await start();
      const { agent, appClient, agentClient } = await bridge.pair();
      await bridge.writer.flush();

      const lock = await lockAgainstWriters(db);
      try {
        expect(await canWrite(db), 'the lock blocks other writers').to.equal(false);

        const { event_id } = await startEvent(appClient, agentClient, agent.agent_id, 't', { q: 'stream please' });
        for (let i = 0; i < 50; i++) agentClient.send({ type: 'token', event_id, token: `w${i} ` });
        bridge.clock.advance(900);
        agentClient.send({ type: 'reply', event_id, content: '', done: true, metadata: { tokens_used: 50 } });
        for (let i = 0; i < 50; i++) expect(await appClient.expect('token')).to.include({ event_id, token: `w${i} ` });
        const reply = await appClient.expect('reply');
        expect(reply.reply).to.equal(Array.from({ length: 50 }, (_, i) => `w${i} `).join(''));
        // Past the group-commit window, the commit is still waiting on the lock: nothing of the event is stored yet.
        await sleep(100);
        expect(await lock.holder('events').where({ event_id }).select()).to.deep.equal([]);

        await lock.release();
        await bridge.writer.flush();
        expect(bridge.writer.pending).to.equal(0);
        const rows = await (await db.open())('events').where({ event_id }).select();
        expect(rows).to.have.length(1);
        expect(rows[0]).to.include({ status: 'delivered', outcome: 'replied', tokens_used: 50, latency_ms: 900 });
        expect(await entry(bridge, event_id)).to.include({ outcome: 'replied', tokens_used: 50, latency_ms: 900 });
      } finally {
        await lock.release();
      }
    });

    it('writes every row of a group commit of thousands of events (several statements on PostgreSQL), and their outcomes over them', async function () {
      const knex = await db.open({ migrate: true });
      const errors: string[] = [];
      const log: Logger = {
        debug() {},
        info() {},
        warn() {},
        error: (fields: any, message) => errors.push(`${message}: ${fields.err?.message}`),
      };
      const writer = new WriteBehind(knex, log, { flushMs: 1_000, maxRows: 10_000 });
      const at = Date.parse('2026-11-22T12:00:00.000Z');
      const count = 6_000; // over two statements of 2,500 rows
      const id = (i: number) => `01KEV${String(i).padStart(6, '0')}`;
      for (let i = 0; i < count; i++) {
        writer.insertEvent({
          event_id: id(i),
          app_id: 'app-a',
          agent_id: 'agent-a',
          thread_id: `t${i % 7}`,
          session_key: null,
          status: 'delivered',
          outcome: 'pending',
          code: null,
          payload_bytes: i,
          tokens_used: null,
          received_at: at + i,
          completed_at: null,
          latency_ms: null,
        });
      }
      await writer.flush();
      for (let i = 0; i < count; i += 2)
        writer.updateEvent(id(i), {
          outcome: 'replied',
          code: null,
          tokens_used: i,
          completed_at: at + i + 40,
          latency_ms: 40,
        });
      await writer.close();

      expect(errors).to.deep.equal([]);
      const rows: EventRow[] = await knex('events').select().orderBy('received_at');
      expect(rows).to.have.length(count);
      rows.forEach((row, i) => {
        const replied = i % 2 === 0;
        expect(row, id(i)).to.deep.equal({
          event_id: id(i),
          app_id: 'app-a',
          agent_id: 'agent-a',
          thread_id: `t${i % 7}`,
          session_key: null,
          status: 'delivered',
          code: null,
          outcome: replied ? 'replied' : 'pending',
          payload_bytes: i,
          tokens_used: replied ? i : null,
          received_at: at + i,
          completed_at: replied ? at + i + 40 : null,
          latency_ms: replied ? 40 : null,
        });
      });
    });

    it('stores the thread ids an app sent as they are, a lone surrogate as U+FFFD, and deletes sessions by key', async function () {
      const knex = await db.open({ migrate: true });
      const writer = new WriteBehind(knex, silentLogger, { flushMs: 1_000, maxRows: 100 });
      const threads = ['a"b\\c', 'é😀\\ud800', 'line\nbreak\ttab', 'lone \ud800 high', 'lone \udfff low'];
      const at = Date.parse('2026-11-22T12:00:00.000Z');
      threads.forEach((thread_id, i) => {
        writer.insertEvent({
          event_id: `01KEW${i}`,
          app_id: 'app-a',
          agent_id: 'agent-a',
          thread_id,
          session_key: null,
          status: 'rejected',
          outcome: 'rejected',
          code: 'INVALID_THREAD_ID',
          payload_bytes: 0,
          tokens_used: Number.MAX_SAFE_INTEGER,
          received_at: at + i,
          completed_at: at + i,
          latency_ms: 0,
        });
        const session = { agent_id: 'agent-a', app_id: 'app-a', thread_id, created_at: at, expires_at: at + DAY_MS };
        writer.upsertSession({ session_key: `s${i}`, ...session });
      });
      await writer.flush();
      writer.deleteSessions(['s0', 's2']);
      await writer.close();

      const stored = ['a"b\\c', 'é😀\\ud800', 'line\nbreak\ttab', 'lone \ufffd high', 'lone \ufffd low'];
      const rows: EventRow[] = await knex('events').select().orderBy('received_at');
      expect(rows.map((r) => r.thread_id)).to.deep.equal(stored);
      expect(rows.map((r) => r.tokens_used)).to.deep.equal(threads.map(() => Number.MAX_SAFE_INTEGER));
      const sessions = await knex('sessions').select('session_key', 'thread_id').orderBy('session_key');
      expect(sessions).to.deep.equal([1, 3, 4].map((i) => ({ session_key: `s${i}`, thread_id: stored[i] })));
    });

    it('logs any tokens_used an agent reports, however large (the spec sets no maximum)', async function () {
      const bridge = await start();
      const { agent, appClient, agentClient } = await bridge.pair();
      const ids: string[] = [];
      for (const tokens_used of [2 ** 31, Number.MAX_SAFE_INTEGER, 1e20]) {
        const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
        agentClient.send({ type: 'reply', event_id, content: 'ok', done: true, metadata: { tokens_used } });
        expect((await appClient.expect('reply')).metadata.tokens_used).to.equal(tokens_used);
        ids.push(event_id);
      }
      const logged = (await events(bridge)).events.reverse();
      expect(logged.map((e) => [e.event_id, e.outcome, e.tokens_used])).to.deep.equal([
        [ids[0], 'replied', 2 ** 31],
        [ids[1], 'replied', Number.MAX_SAFE_INTEGER],
        [ids[2], 'replied', 1e20],
      ]);
    });

    it("queues an event's row in memory and commits it in a group commit: one row per event, not one write per token", async function () {
      const bridge = await start({ eventLogFlushMs: 20 });
      const { agent, appClient, agentClient } = await bridge.pair();
      await bridge.writer.flush();
      expect(bridge.writer.pending).to.equal(0);

      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
      const { event_id } = await appClient.expect('accepted');
      expect(bridge.writer.pending, 'queued right after the event').to.be.greaterThan(0);
      await bridge.writer.flush();
      expect(bridge.writer.pending).to.equal(0);

      await agentClient.expect('event');
      for (let i = 0; i < 50; i++) agentClient.send({ type: 'token', event_id, token: `t${i}` });
      for (let i = 0; i < 50; i++) await appClient.expect('token');
      expect(bridge.writer.pending, 'tokens queue nothing').to.equal(0);
      agentClient.send({ type: 'reply', event_id, content: '', done: true });
      await appClient.expect('reply');
      expect(bridge.writer.pending, 'the reply queues one update').to.equal(1);
      await bridge.writer.flush();
      expect(bridge.writer.pending).to.equal(0);

      const log = await events(bridge);
      expect(log.events).to.have.length(1);
      expect(log.events[0]).to.include({ event_id, outcome: 'replied', tokens_used: 50 });
    });
  });

  describe('retention', function () {
    it('deletes rows older than EVENT_LOG_RETENTION_DAYS in the hourly sweep and keeps the newer ones', async function () {
      const bridge = await start({ eventLogRetentionDays: 1 });
      const startedAt = bridge.clock.now();
      const paired = await bridge.pair();
      const { app, agent } = paired;
      const { event_id: old } = await exchange(paired.appClient, paired.agentClient, agent.agent_id);
      await disconnect(bridge, paired.appClient, paired.agentClient);

      bridge.clock.advance(12 * 3_600_000);
      const agentClient = await bridge.connectAgent(agent.token);
      const appClient = await bridge.connectApp(app.token);
      const { event_id: recent } = await exchange(appClient, agentClient, agent.agent_id);
      await disconnect(bridge, appClient, agentClient);
      expect((await events(bridge)).events.map((e) => e.event_id)).to.deep.equal([recent, old]);

      bridge.clock.advance(startedAt + DAY_MS + SWEEP_INTERVAL_MS - bridge.clock.now());
      let ids: string[] = [];
      for (let i = 0; i < 50; i++) {
        ids = (await events(bridge)).events.map((e) => e.event_id);
        if (!ids.includes(old)) break;
        await sleep(10);
      }
      expect(ids).to.deep.equal([recent]);
    });

    it('keeps every row when EVENT_LOG_RETENTION_DAYS is 0', async function () {
      const bridge = await start({ eventLogRetentionDays: 0 });
      const { agent, appClient, agentClient } = await bridge.pair();
      const { event_id: first } = await exchange(appClient, agentClient, agent.agent_id);
      await disconnect(bridge, appClient, agentClient);

      bridge.clock.advance(45 * DAY_MS + SWEEP_INTERVAL_MS);
      for (let i = 0; i < 5; i++) {
        expect((await events(bridge)).events.map((e) => e.event_id)).to.deep.equal([first]);
        await sleep(10);
      }
    });
  });
});
