// Rows a crash left `pending` (O9): marked `lost` once older than any event can be in flight (agent timeout +
// reconnect grace + 60 s), at start, once more that long after the start, and by the hourly sweep; never the row
// of an event still in flight. The crash itself is in crash.test.ts; here its leftovers are written directly, as a
// killed bridge (or another process sharing the database) leaves them, and time moves on the frozen clock.
import { expect } from 'chai';
import { LIMITS, type EventOutcome } from '../../generated/index.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import type { Logger } from '../../src/shared/logger.js';
import { startServer, SWEEP_INTERVAL_MS, type RunningBridge } from '../../src/server.js';
import { lostAfterMs } from '../../src/store/lost-outcomes.js';
import type { EventRow } from '../../src/store/write-behind.js';
import { ADMIN_TOKEN, testConfig } from '../helpers/bridge.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { startEvent } from '../helpers/events.js';
import { httpJson } from '../helpers/http.js';
import { TestClient, type AgentClient, type AppClient } from '../helpers/ws-client.js';

const START = Date.parse('2026-11-22T12:00:00.000Z');
const AGENT_TIMEOUT_MS = 300_000;
const LOST_AFTER_MS = lostAfterMs(AGENT_TIMEOUT_MS, LIMITS.agentReconnectGraceMs);

function row(eventId: string, receivedAt: number, outcome: EventOutcome = 'pending'): EventRow {
  const done = outcome !== 'pending';
  return {
    event_id: eventId,
    app_id: 'app-left',
    agent_id: 'agent-left',
    thread_id: 't',
    session_key: null,
    status: 'delivered',
    outcome,
    code: null,
    payload_bytes: 9,
    tokens_used: done ? 1 : null,
    received_at: receivedAt,
    completed_at: done ? receivedAt + 5 : null,
    latency_ms: done ? 5 : null,
  };
}

describeEachDatabase('event-log rows a crash left pending (O9)', function (db) {
  let bridge: RunningBridge | undefined;
  const clients: TestClient<any>[] = [];
  const warnings: { fields: any; message: string }[] = [];
  const log: Logger = {
    debug() {},
    info() {},
    warn: (fields, message) => warnings.push({ fields, message }),
    error() {},
  };

  /** Rows written straight into the database, as a bridge killed mid-load leaves them. */
  async function leftBehind(...rows: EventRow[]): Promise<void> {
    await (await db.open({ migrate: true }))('events').insert(rows);
  }
  async function start(clock: AdjustableClock): Promise<RunningBridge> {
    bridge = await startServer(testConfig({ databaseUrl: db.url(), agentTimeoutMs: AGENT_TIMEOUT_MS }), { clock, log });
    return bridge;
  }
  async function outcomes(): Promise<Record<string, string>> {
    const res = await httpJson(bridge!.url, 'GET', '/admin/v1/events?limit=500', {
      token: ADMIN_TOKEN,
      schema: 'EventLog',
    });
    expect(res.status).to.equal(200);
    return Object.fromEntries(res.body.events.map((e: any) => [e.event_id, e.outcome]));
  }
  /** The marking a timer started is a database update of its own: read until it shows (or give up). */
  async function until(eventId: string, outcome: string): Promise<Record<string, string>> {
    let seen: Record<string, string> = {};
    for (let i = 0; i < 100; i++) {
      seen = await outcomes();
      if (seen[eventId] === outcome) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return seen;
  }

  beforeEach(function () {
    warnings.length = 0;
  });

  afterEach(async function () {
    for (const c of clients.splice(0)) c.close();
    await bridge?.close();
    bridge = undefined;
  });

  it('marks lost at start the rows pending longer than any event can be in flight, the younger ones that long after the start, and logs how many', async function () {
    await leftBehind(
      row('01OLD', START - LOST_AFTER_MS - 1),
      row('01YOUNG', START - 1_000),
      row('01REPLIED', START - LOST_AFTER_MS - 1, 'replied'),
    );
    const clock = new AdjustableClock({ frozen: true, start: START });
    await start(clock);

    expect(await outcomes()).to.deep.equal({ '01OLD': 'lost', '01YOUNG': 'pending', '01REPLIED': 'replied' });
    const res = await httpJson(bridge!.url, 'GET', '/admin/v1/events?limit=500', {
      token: ADMIN_TOKEN,
      schema: 'EventLog',
    });
    const lost = res.body.events.find((e: any) => e.event_id === '01OLD');
    expect(lost, 'a lost row keeps what was known and claims no end').to.include({
      status: 'delivered',
      code: null,
      completed_at: null,
      latency_ms: null,
      tokens_used: null,
    });
    expect(warnings.map((w) => w.fields)).to.deep.equal([{ rows: 1, older_than_ms: LOST_AFTER_MS }]);

    clock.advance(LOST_AFTER_MS - 1);
    expect((await outcomes())['01YOUNG'], 'not yet as old as that').to.equal('pending');
    clock.advance(1);
    expect(await until('01YOUNG', 'lost')).to.deep.equal({
      '01OLD': 'lost',
      '01YOUNG': 'lost',
      '01REPLIED': 'replied',
    });
    expect(warnings.map((w) => w.fields.rows)).to.deep.equal([1, 1]);
  });

  it('marks lost, by the hourly sweep, rows another process left pending later; never the row of an event in flight here', async function () {
    const clock = new AdjustableClock({ frozen: true, start: START });
    await start(clock);
    // Past the start's second marking, to a second before the first hourly sweep: from here on only the sweep marks.
    clock.advance(SWEEP_INTERVAL_MS - 1_000);
    const admin = (path: string, body: object) => httpJson(bridge!.url, 'POST', path, { token: ADMIN_TOKEN, body });
    const org = (await admin('/admin/v1/organizations', { name: 'Lost Org' })).body;
    const app = (await admin(`/admin/v1/organizations/${org.org_id}/apps`, { name: 'Lost App' })).body;
    const agent = (await admin(`/admin/v1/organizations/${org.org_id}/agents`, { name: 'Lost Agent' })).body;
    const agentClient = (await TestClient.connect(bridge!.url, 'agent', agent.token)) as AgentClient;
    const appClient = (await TestClient.connect(bridge!.url, 'app', app.token)) as AppClient;
    clients.push(agentClient, appClient);

    // An event in flight across the sweep: its row is pending in the database meanwhile.
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id, 't', { n: 1 });
    await bridge!.writer.flush();
    await leftBehind(row('01OTHER', clock.now() - LOST_AFTER_MS - 1));

    clock.advance(1_000); // the first hourly sweep
    expect(await until('01OTHER', 'lost')).to.deep.equal({ '01OTHER': 'lost', [event_id]: 'pending' });
    expect(warnings.map((w) => w.fields.rows)).to.deep.equal([1]);

    agentClient.send({ type: 'reply', event_id, content: 'ok', done: true });
    await appClient.expect('reply');
    expect((await outcomes())[event_id]).to.equal('replied');
  });
});
