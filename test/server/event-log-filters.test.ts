// The event log by organization and by time (D11): `org_id` keeps the events of the apps the organization has now,
// `since` and `until` the events received in [since, until); both combine with the other filters and with paging.
import { expect } from 'chai';
import { QUERY_PARAMETERS } from '../../generated/index.js';
import { iso } from '../../src/shared/time.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { exchange } from '../helpers/events.js';

async function ids(bridge: TestBridge, query: string): Promise<string[]> {
  const res = await bridge.http('GET', `/admin/v1/events?${query}`, { schema: 'EventLog' });
  expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(200);
  return res.body.events.map((e: { event_id: string }) => e.event_id);
}

const newestFirst = (list: string[]) => [...list].sort().reverse();

describeEachDatabase('the event log by organization and time', function (db) {
  const start = () => startTestBridge({ databaseUrl: db.url() });

  it("keeps the events of the organization's apps, every app of it and no other organization's, and pages within them", async function () {
    const bridge = await start();
    const a = await bridge.pair();
    const second = await bridge.app(a.org.org_id, 'Second App');
    const secondClient = await bridge.connectApp(second.token);
    const b = await bridge.pair();
    const ofA: string[] = [];
    const ofB: string[] = [];
    for (let i = 0; i < 3; i++) {
      ofA.push((await exchange(a.appClient, a.agentClient, a.agent.agent_id)).event_id);
      ofA.push((await exchange(secondClient, a.agentClient, a.agent.agent_id)).event_id);
      ofB.push((await exchange(b.appClient, b.agentClient, b.agent.agent_id)).event_id);
    }
    expect(await ids(bridge, `org_id=${a.org.org_id}`)).to.deep.equal(newestFirst(ofA));
    expect(await ids(bridge, `org_id=${b.org.org_id}`)).to.deep.equal(newestFirst(ofB));
    expect(await ids(bridge, `org_id=${a.org.org_id}&app_id=${second.app_id}`)).to.have.length(3);
    expect(await ids(bridge, `org_id=${a.org.org_id}&app_id=${b.app.app_id}`)).to.deep.equal([]);

    const page = await bridge.http('GET', `/admin/v1/events?org_id=${a.org.org_id}&limit=4`, { schema: 'EventLog' });
    const rest = await ids(bridge, `org_id=${a.org.org_id}&before=${page.body.next_before}`);
    expect([...page.body.events.map((e: { event_id: string }) => e.event_id), ...rest]).to.deep.equal(newestFirst(ofA));

    // An organization no app belongs to (unknown, or deleted: its rows stay until retention) has no events.
    expect(await ids(bridge, 'org_id=nobody-abc123')).to.deep.equal([]);
    expect((await bridge.http('DELETE', `/admin/v1/organizations/${b.org.org_id}`)).status).to.equal(200);
    expect(await ids(bridge, `org_id=${b.org.org_id}`)).to.deep.equal([]);
    expect(await ids(bridge, `app_id=${b.app.app_id}`)).to.deep.equal(newestFirst(ofB));
  });

  it('keeps the events received at or after since and before until, in any time zone offset', async function () {
    const bridge = await start();
    const { agent, appClient, agentClient } = await bridge.pair();
    const times: number[] = [];
    const sent: string[] = [];
    for (let i = 0; i < 4; i++) {
      times.push(bridge.clock.now());
      sent.push((await exchange(appClient, agentClient, agent.agent_id)).event_id);
      bridge.clock.advance(60_000);
    }
    const [t0, t1, t2, t3] = times as [number, number, number, number];
    expect(await ids(bridge, `since=${iso(t1)}`)).to.deep.equal(newestFirst(sent.slice(1)));
    expect(await ids(bridge, `until=${iso(t2)}`)).to.deep.equal(newestFirst(sent.slice(0, 2)));
    expect(await ids(bridge, `since=${iso(t1)}&until=${iso(t3)}`)).to.deep.equal(newestFirst(sent.slice(1, 3)));
    expect(await ids(bridge, `since=${iso(t1 + 1)}&until=${iso(t2 + 1)}`)).to.deep.equal([sent[2]]);
    expect(await ids(bridge, `since=${iso(t3)}&until=${iso(t0)}`)).to.deep.equal([]);
    // 13:00+01:00 is 12:00Z: the offset is honoured, not dropped.
    const shifted = new Date(t1 + 3_600_000).toISOString().replace('Z', '+01:00');
    expect(await ids(bridge, `since=${encodeURIComponent(shifted)}&status=delivered`)).to.deep.equal(
      newestFirst(sent.slice(1)),
    );
  });

  it('answers 400 INVALID_REQUEST naming the parameter for a bad org_id, since or until', async function () {
    const bridge = await start();
    const cases: [query: string, name: string][] = [
      ['org_id=Not_An_Org', 'org_id'],
      ['since=yesterday', 'since'],
      ['since=2025-02-01', 'since'],
      ['since=2025-02-01T11:00:00', 'since'], // no offset: which time would it be?
      ['until=2025-02-30T11:00:00Z', 'until'],
      [`until=2025-02-01T11:00:00.${'0'.repeat(QUERY_PARAMETERS.listEvents.until.maxLength)}Z`, 'until'],
    ];
    for (const [query, name] of cases) {
      const res = await bridge.http('GET', `/admin/v1/events?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.code, query).to.equal('INVALID_REQUEST');
      expect(res.body.error, query).to.match(new RegExp(`^${name}:`));
    }
    expect(
      (
        await bridge.http('GET', '/admin/v1/events?since=2025-02-01T11:00:00Z&until=2025-02-01T12:00:00.500%2B02:00', {
          schema: 'EventLog',
        })
      ).status,
    ).to.equal(200);
  });
});
