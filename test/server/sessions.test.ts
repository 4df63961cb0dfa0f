// Sessions (§1.9, §2.5, H4): created by the first event of an (agent, app, thread), reused until the agent's TTL
// has passed since its creation, then made anew by the next event; listed by GET /admin/v1/sessions, deleted by
// the hourly sweep, and kept in the database across a restart.
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import type { Config } from '../../src/config.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { startServer, SWEEP_INTERVAL_MS } from '../../src/server.js';
import { DAY_MS, iso } from '../../src/shared/time.js';
import { ADMIN_TOKEN, startTestBridge, type TestBridge, disconnect, testConfig } from '../helpers/bridge.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { exchange } from '../helpers/events.js';
import { sample, scrape } from '../helpers/metrics.js';

const DEFAULT_TTL_MS = LIMITS.sessionTtlDefaultDays * DAY_MS;

async function sessions(bridge: TestBridge, query = ''): Promise<any[]> {
  const res = await bridge.http('GET', `/admin/v1/sessions${query}`, { schema: 'SessionList' });
  expect(res.status).to.equal(200);
  return res.body.sessions;
}

describeEachDatabase('sessions', function (db) {
  const start = (overrides: Partial<Config> = {}) => startTestBridge({ databaseUrl: db.url(), ...overrides });

  async function readTable(table: string): Promise<any[]> {
    return (await db.open())(table).select();
  }

  it("creates a session with the first event of a thread: its key, ids, creation time and expiry after the agent's ttl_days", async function () {
    const bridge = await start();
    const { org, app, agent, appClient, agentClient } = await bridge.pair();
    const longMemory = await bridge.agent(org.org_id, 'Long Memory', { ttl_days: 30 });
    const longClient = await bridge.connectAgent(longMemory.token);
    expect(await sessions(bridge)).to.deep.equal([]);

    bridge.clock.advance(5_000);
    const at = bridge.clock.now();
    const accepted = await exchange(appClient, agentClient, agent.agent_id, 'lesson-42');
    expect(accepted.session_key).to.equal(`svc:${agent.agent_id}:${app.app_id}:lesson-42`);
    expect(await sessions(bridge)).to.deep.equal([
      {
        session_key: accepted.session_key,
        agent_id: agent.agent_id,
        app_id: app.app_id,
        thread_id: 'lesson-42',
        created_at: iso(at),
        expires_at: iso(at + DEFAULT_TTL_MS),
      },
    ]);

    bridge.clock.advance(1_000);
    const longAt = bridge.clock.now();
    const longAccepted = await exchange(appClient, longClient, longMemory.agent_id, 'essay:7');
    expect(await sessions(bridge, `?agent_id=${longMemory.agent_id}`)).to.deep.equal([
      {
        session_key: longAccepted.session_key,
        agent_id: longMemory.agent_id,
        app_id: app.app_id,
        thread_id: 'essay:7',
        created_at: iso(longAt),
        expires_at: iso(longAt + 30 * DAY_MS),
      },
    ]);
  });

  it('reuses the session of a thread while its TTL has not passed, and keeps threads, agents and apps apart (filters agent_id, app_id)', async function () {
    const bridge = await start();
    const paired = await bridge.pair();
    const { org, app, agent } = paired;
    let { appClient, agentClient } = paired;

    const created = bridge.clock.now();
    const first = await exchange(appClient, agentClient, agent.agent_id, 't');
    await disconnect(bridge, appClient, agentClient);

    bridge.clock.advance(DEFAULT_TTL_MS - 1);
    agentClient = await bridge.connectAgent(agent.token);
    appClient = await bridge.connectApp(app.token);
    const again = await exchange(appClient, agentClient, agent.agent_id, 't');
    expect(again.session_key).to.equal(first.session_key);
    expect(await sessions(bridge, `?agent_id=${agent.agent_id}`)).to.deep.equal([
      {
        session_key: first.session_key,
        agent_id: agent.agent_id,
        app_id: app.app_id,
        thread_id: 't',
        created_at: iso(created),
        expires_at: iso(created + DEFAULT_TTL_MS),
      },
    ]);

    // Another thread, another agent, another app: each its own session.
    const otherApp = await bridge.app(org.org_id, 'Other App');
    const otherAgent = await bridge.agent(org.org_id, 'Other Agent');
    const otherAgentClient = await bridge.connectAgent(otherAgent.token);
    const otherAppClient = await bridge.connectApp(otherApp.token);
    const now = bridge.clock.now();
    const keys = [
      (await exchange(appClient, agentClient, agent.agent_id, 'u')).session_key,
      (await exchange(appClient, otherAgentClient, otherAgent.agent_id, 't')).session_key,
      (await exchange(otherAppClient, agentClient, agent.agent_id, 't')).session_key,
    ];
    expect(new Set([first.session_key, ...keys]).size).to.equal(4);

    const all = await sessions(bridge);
    expect(all.map((s) => s.session_key)).to.deep.equal(
      [first.session_key, ...keys].sort((a, b) => a.localeCompare(b)),
    );
    for (const s of all.filter((s) => s.session_key !== first.session_key)) {
      expect(s.created_at, s.session_key).to.equal(iso(now));
      expect(s.expires_at, s.session_key).to.equal(iso(now + DEFAULT_TTL_MS));
    }

    const ofAgent = await sessions(bridge, `?agent_id=${agent.agent_id}`);
    expect(ofAgent.map((s) => [s.app_id, s.thread_id])).to.have.deep.members([
      [app.app_id, 't'],
      [app.app_id, 'u'],
      [otherApp.app_id, 't'],
    ]);
    const ofApp = await sessions(bridge, `?app_id=${app.app_id}`);
    expect(ofApp.map((s) => [s.agent_id, s.thread_id])).to.have.deep.members([
      [agent.agent_id, 't'],
      [agent.agent_id, 'u'],
      [otherAgent.agent_id, 't'],
    ]);
    const both = await sessions(bridge, `?agent_id=${otherAgent.agent_id}&app_id=${app.app_id}`);
    expect(both.map((s) => s.session_key)).to.deep.equal([keys[1]]);
    expect(await sessions(bridge, `?agent_id=${otherAgent.agent_id}&app_id=${otherApp.app_id}`)).to.deep.equal([]);
  });

  it("lists sessions a page at a time: 100 by default, up to 500, the next page after the previous one's next_after", async function () {
    const bridge = await start();
    const { agent, appClient, agentClient } = await bridge.pair();
    for (let i = 0; i < 205; i++) await exchange(appClient, agentClient, agent.agent_id, `t-${i}`);
    const page = (query: string) => bridge.http('GET', `/admin/v1/sessions${query}`, { schema: 'SessionList' });
    const keys: string[] = [];
    const first = await page('');
    expect(first.body.sessions).to.have.length(100);
    keys.push(...first.body.sessions.map((s: any) => s.session_key));
    for (let after = first.body.next_after; after;) {
      const next = await page(`?after=${encodeURIComponent(after)}`);
      keys.push(...next.body.sessions.map((s: any) => s.session_key));
      after = next.body.next_after;
      if (!after) expect(next.body.sessions, 'the last page').to.have.length(5);
    }
    expect(keys).to.have.length(205);
    expect(keys).to.deep.equal([...keys].sort());
    expect(new Set(keys).size).to.equal(205);
    const whole = await page('?limit=500');
    expect(whole.body.sessions.map((s: any) => s.session_key)).to.deep.equal(keys);
    expect(whole.body.next_after).to.equal(null);
    for (const bad of ['?limit=0', '?limit=501', '?limit=ten', '?after=not-a-key']) {
      const res = await bridge.http('GET', `/admin/v1/sessions${bad}`);
      expect(res.status, bad).to.equal(400);
      expect(res.body.code, bad).to.equal('INVALID_REQUEST');
    }
  });

  it('counts the TTL from creation, not from the last event: after it the session is unlisted and the next event makes a new one with the same key', async function () {
    const bridge = await start();
    const paired = await bridge.pair();
    const { app, agent } = paired;
    let { appClient, agentClient } = paired;

    const created = bridge.clock.now();
    const first = await exchange(appClient, agentClient, agent.agent_id, 'lesson');
    await disconnect(bridge, appClient, agentClient);

    // An event one millisecond before the expiry reuses the session and does not extend it.
    bridge.clock.advance(DEFAULT_TTL_MS - 1);
    agentClient = await bridge.connectAgent(agent.token);
    appClient = await bridge.connectApp(app.token);
    await exchange(appClient, agentClient, agent.agent_id, 'lesson');
    expect((await sessions(bridge)).map((s) => [s.created_at, s.expires_at])).to.deep.equal([
      [iso(created), iso(created + DEFAULT_TTL_MS)],
    ]);
    await disconnect(bridge, appClient, agentClient);

    bridge.clock.advance(1);
    expect(await sessions(bridge)).to.deep.equal([]);
    bridge.clock.advance(60_000);
    expect(await sessions(bridge)).to.deep.equal([]);

    agentClient = await bridge.connectAgent(agent.token);
    appClient = await bridge.connectApp(app.token);
    const recreated = bridge.clock.now();
    const next = await exchange(appClient, agentClient, agent.agent_id, 'lesson');
    expect(next.session_key).to.equal(first.session_key);
    expect(await sessions(bridge)).to.deep.equal([
      {
        session_key: first.session_key,
        agent_id: agent.agent_id,
        app_id: app.app_id,
        thread_id: 'lesson',
        created_at: iso(recreated),
        expires_at: iso(recreated + DEFAULT_TTL_MS),
      },
    ]);
  });

  it('deletes expired sessions from the database in the hourly sweep, and keeps the live ones', async function () {
    const bridge = await start();
    const { org, agent, appClient, agentClient } = await bridge.pair();
    const longMemory = await bridge.agent(org.org_id, 'Long Memory', { ttl_days: 30 });
    const longClient = await bridge.connectAgent(longMemory.token);
    const short = await exchange(appClient, agentClient, agent.agent_id, 't');
    const long = await exchange(appClient, longClient, longMemory.agent_id, 't');
    await bridge.writer.flush();
    expect((await readTable('sessions')).map((r) => r.session_key)).to.have.members([
      short.session_key,
      long.session_key,
    ]);
    expect(bridge.sessions.size).to.equal(2);

    await disconnect(bridge, appClient, agentClient, longClient);
    bridge.clock.advance(DEFAULT_TTL_MS + SWEEP_INTERVAL_MS);
    expect(bridge.sessions.size).to.equal(1);
    await bridge.writer.flush();
    expect((await readTable('sessions')).map((r) => r.session_key)).to.deep.equal([long.session_key]);

    await bridge.close();
    expect((await readTable('sessions')).map((r) => r.session_key)).to.deep.equal([long.session_key]);
  });

  it('also deletes from the database the sessions that expired while the bridge was stopped', async function () {
    const first = await start();
    const { agent, appClient, agentClient } = await first.pair();
    const created = first.clock.now();
    const accepted = await exchange(appClient, agentClient, agent.agent_id, 't');
    await first.close();
    expect((await readTable('sessions')).map((r) => r.session_key)).to.deep.equal([accepted.session_key]);

    // Started again after the session's TTL (the harness always starts its clock at the same instant, so this
    // restart gets its own clock).
    const clock = new AdjustableClock({ frozen: true, start: created + DEFAULT_TTL_MS + 1 });
    const config = testConfig({ databaseUrl: db.url(), adminToken: ADMIN_TOKEN, logLevel: 'silent' });
    const second = await startServer(config, { clock });
    try {
      clock.advance(SWEEP_INTERVAL_MS);
      await second.writer.flush();
    } finally {
      await second.close();
    }
    expect(await readTable('sessions')).to.deep.equal([]);
  });

  it("keeps at most MAX_SESSIONS_PER_APP per app: a new thread evicts the app's least recently used session, from the database too; other apps keep theirs (L17)", async function () {
    const bridge = await start({ maxSessionsPerApp: 3 });
    const { org, agent, appClient, agentClient } = await bridge.pair();
    const other = await bridge.app(org.org_id, 'Other');
    const otherClient = await bridge.connectApp(other.token);
    await exchange(otherClient, agentClient, agent.agent_id, 'kept');
    for (const thread of ['a', 'b', 'c']) await exchange(appClient, agentClient, agent.agent_id, thread);
    await exchange(appClient, agentClient, agent.agent_id, 'a'); // used again: now b is the least recent
    const d = await exchange(appClient, agentClient, agent.agent_id, 'd');
    await exchange(appClient, agentClient, agent.agent_id, 'e');

    const threads = (list: any[]) =>
      list.map((s) => `${s.app_id === other.app_id ? 'other' : 'app'}:${s.thread_id}`).sort();
    expect(threads(await sessions(bridge))).to.deep.equal(['app:a', 'app:d', 'app:e', 'other:kept']);
    await bridge.writer.flush();
    expect(threads(await readTable('sessions'))).to.deep.equal(['app:a', 'app:d', 'app:e', 'other:kept']);
    expect(sample(await scrape(bridge.url), 'bridge_sessions_evicted_total')).to.equal(2);
    expect(sample(await scrape(bridge.url), 'bridge_sessions')).to.equal(4);
    // The conversation goes on: the evicted thread's next event has the same keys, in a new session record.
    const b = await exchange(appClient, agentClient, agent.agent_id, 'b');
    expect(b.session_key).to.equal(d.session_key.replace(/:d$/, ':b'));
    expect(threads(await sessions(bridge))).to.deep.equal(['app:b', 'app:d', 'app:e', 'other:kept']);
  });

  it('evicts at start, oldest first, the sessions over a MAX_SESSIONS_PER_APP lowered since they were stored', async function () {
    const first = await start();
    const { agent, appClient, agentClient } = await first.pair();
    for (const thread of ['one', 'two', 'three']) {
      first.clock.advance(1_000);
      await exchange(appClient, agentClient, agent.agent_id, thread);
    }
    await first.close();

    const second = await start({ maxSessionsPerApp: 2 });
    expect((await sessions(second)).map((s: any) => s.thread_id).sort()).to.deep.equal(['three', 'two']);
    await second.writer.flush();
    expect((await readTable('sessions')).map((s) => s.thread_id).sort()).to.deep.equal(['three', 'two']);
  });

  it("keeps sessions across a restart: same creation time, and the thread's next event reuses it", async function () {
    const first = await start();
    const { app, agent, appClient, agentClient } = await first.pair();
    first.clock.advance(2_000);
    const created = first.clock.now();
    const accepted = await exchange(appClient, agentClient, agent.agent_id, 'lesson-42');
    const before = await sessions(first);
    expect(before).to.have.length(1);
    expect(before[0]).to.include({
      session_key: accepted.session_key,
      created_at: iso(created),
      expires_at: iso(created + DEFAULT_TTL_MS),
    });
    await first.close();

    const second = await start();
    expect(await sessions(second)).to.deep.equal(before);

    second.clock.advance(DAY_MS);
    const againAgent = await second.connectAgent(agent.token);
    const againApp = await second.connectApp(app.token);
    const next = await exchange(againApp, againAgent, agent.agent_id, 'lesson-42');
    expect(next.session_key).to.equal(accepted.session_key);
    expect(await sessions(second)).to.deep.equal(before);
  });
});
