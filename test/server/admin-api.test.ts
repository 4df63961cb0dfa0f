// The admin API (spec/openapi.yaml, H1, H3): every 2xx body is checked against its generated schema and every
// error body against HttpError by bridge.http.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { ADMIN_TOKEN, startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { startEvent } from '../helpers/events.js';
import type { TestClient } from '../helpers/ws-client.js';

const ID = /^[a-z0-9-]{1,64}$/;

/** The admin routes of spec/openapi.yaml that this bridge serves, with a body each would accept. */
const ADMIN_ROUTES: [method: string, path: string, body?: unknown][] = [
  ['GET', '/admin/v1/organizations'],
  ['POST', '/admin/v1/organizations', { name: 'Acme' }],
  ['DELETE', '/admin/v1/organizations/acme-abc123'],
  ['GET', '/admin/v1/organizations/acme-abc123/apps'],
  ['POST', '/admin/v1/organizations/acme-abc123/apps', { name: 'App' }],
  ['GET', '/admin/v1/organizations/acme-abc123/agents'],
  ['POST', '/admin/v1/organizations/acme-abc123/agents', { name: 'Agent' }],
  ['PUT', '/admin/v1/agents/agent-abc123/allowlist', { app_ids: null }],
  ['POST', '/admin/v1/test/clock', { advance_ms: 0 }],
  ['PATCH', '/admin/v1/organizations/acme-abc123', { name: 'Acme' }],
  ['PATCH', '/admin/v1/apps/app-abc123', { name: 'App' }],
  ['PATCH', '/admin/v1/agents/agent-abc123', { ttl_days: 1 }],
  ['GET', '/admin/v1/audit'],
];

/** Moves the test clock through POST /admin/v1/test/clock in heartbeat periods, the clients pinging in between. */
async function postClockWithHeartbeats(bridge: TestBridge, ms: number, clients: TestClient<any>[]): Promise<void> {
  for (let left = ms; left > 0;) {
    const step = Math.min(left, LIMITS.heartbeatIntervalMs);
    const before = await bridge.http('POST', '/admin/v1/test/clock', { body: { advance_ms: 0 }, schema: 'ClockNow' });
    const after = await bridge.http('POST', '/admin/v1/test/clock', { body: { advance_ms: step }, schema: 'ClockNow' });
    expect(after.status).to.equal(200);
    expect(Date.parse(after.body.now) - Date.parse(before.body.now)).to.equal(step);
    left -= step;
    for (const client of clients) await client.expectNothingBeforePong();
  }
}

describe('admin API', function () {
  it('answers 404 ADMIN_API_DISABLED on every admin route when ADMIN_TOKEN is unset, whatever the token', async function () {
    const bridge = await startTestBridge({ adminToken: undefined, testClock: true });
    for (const [method, path, body] of ADMIN_ROUTES) {
      for (const token of [null, ADMIN_TOKEN, 'anything-at-all-0123456789']) {
        const res = await bridge.http(method, path, { body, token });
        expect(res.status, `${method} ${path}`).to.equal(404);
        expect(res.body.code, `${method} ${path}`).to.equal('ADMIN_API_DISABLED');
        expect(res.body.error).to.match(/ADMIN_TOKEN/);
      }
    }
  });

  it('answers 401 UNAUTHORIZED on every admin route without the admin token or with a wrong one', async function () {
    const bridge = await startTestBridge({ testClock: true });
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    for (const [method, path, body] of ADMIN_ROUTES) {
      for (const token of [null, `${ADMIN_TOKEN}x`, app.token]) {
        const res = await bridge.http(method, path, { body, token });
        expect(res.status, `${method} ${path} with ${token}`).to.equal(401);
        expect(res.body.code).to.equal('UNAUTHORIZED');
      }
    }
    const { body } = await bridge.http('GET', '/admin/v1/organizations', { schema: 'OrganizationList' });
    expect(body.organizations).to.have.length(1);
  });

  it('creates and lists organizations, sorted by org_id, with ids derived from the names', async function () {
    const bridge = await startTestBridge();
    const created = await bridge.http('POST', '/admin/v1/organizations', {
      body: { name: 'Zeta Learning' },
      schema: 'Organization',
    });
    expect(created.status).to.equal(201);
    expect(created.body).to.include({ name: 'Zeta Learning' });
    expect(created.body.org_id)
      .to.match(ID)
      .and.match(/^zeta-learning-/);
    expect(created.body.created_at).to.equal('2026-11-22T12:00:00.000Z');
    for (const name of ['Acme', 'a b', 'a1']) {
      expect(
        (await bridge.http('POST', '/admin/v1/organizations', { body: { name }, schema: 'Organization' })).status,
      ).to.equal(201);
    }

    const list = await bridge.http('GET', '/admin/v1/organizations', { schema: 'OrganizationList' });
    expect(list.status).to.equal(200);
    const ids = list.body.organizations.map((o: { org_id: string }) => o.org_id);
    expect(ids).to.have.length(4);
    expect(ids).to.deep.equal([...ids].sort());
    expect(list.body.organizations).to.deep.include(created.body);
  });

  it('registers an app with a token shown once that works on /v1/ws/app, and lists apps sorted without tokens', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const res = await bridge.http('POST', `/admin/v1/organizations/${org.org_id}/apps`, {
      body: { name: 'Classroom App' },
      schema: 'AppCreated',
    });
    expect(res.status).to.equal(201);
    const app = res.body;
    expect(app).to.include({ org_id: org.org_id, name: 'Classroom App', active: true });
    expect(app.app_id)
      .to.match(ID)
      .and.match(/^classroom-app-/);
    expect(app.token).to.match(new RegExp(`^rlk_${app.app_id}_[A-Za-z0-9]{32,}$`));

    const client = await bridge.connectApp(app.token);
    await client.expectNothingBeforePong();

    const others = [
      await bridge.app(org.org_id, 'Zoo'),
      await bridge.app(org.org_id, 'A b'),
      await bridge.app(org.org_id, 'A1'),
    ];
    const list = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/apps`, { schema: 'AppList' });
    expect(list.status).to.equal(200);
    const ids = list.body.apps.map((a: { app_id: string }) => a.app_id);
    expect(ids).to.have.members([app.app_id, ...others.map((o) => o.app_id)]);
    expect(ids).to.deep.equal([...ids].sort());
    const { token: _token, ...withoutToken } = app;
    expect(withoutToken.online).to.equal(false);
    expect(list.body.apps).to.deep.include({ ...withoutToken, online: true }); // its client is connected
    expect(list.body.apps.filter((a: { online: boolean }) => a.online)).to.have.length(1);
    const text = JSON.stringify(list.body);
    expect(text).not.to.include('"token"');
    for (const a of [app, ...others]) expect(text).not.to.include(a.token);
  });

  it('registers agents with defaults or the given description and ttl_days, and lists them sorted without tokens', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const plain = await bridge.http('POST', `/admin/v1/organizations/${org.org_id}/agents`, {
      body: { name: 'Math Tutor' },
      schema: 'AgentCreated',
    });
    expect(plain.status).to.equal(201);
    expect(plain.body).to.include({
      org_id: org.org_id,
      name: 'Math Tutor',
      description: '',
      ttl_days: LIMITS.sessionTtlDefaultDays,
      allowlist: null,
      active: true,
      online: false,
    });
    expect(plain.body.agent_id)
      .to.match(ID)
      .and.match(/^math-tutor-/);
    expect(plain.body.token).to.match(new RegExp(`^rla_${plain.body.agent_id}_[A-Za-z0-9]{32,}$`));

    const custom = await bridge.http('POST', `/admin/v1/organizations/${org.org_id}/agents`, {
      body: { name: 'Essay Coach!', description: 'Gives feedback on essay drafts.', ttl_days: 30 },
      schema: 'AgentCreated',
    });
    expect(custom.status).to.equal(201);
    expect(custom.body).to.include({
      name: 'Essay Coach!',
      description: 'Gives feedback on essay drafts.',
      ttl_days: 30,
      allowlist: null,
    });
    expect(custom.body.agent_id)
      .to.match(ID)
      .and.match(/^essay-coach-/);

    const list = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, { schema: 'AgentList' });
    expect(list.status).to.equal(200);
    const ids = list.body.agents.map((a: { agent_id: string }) => a.agent_id);
    expect(ids).to.deep.equal([custom.body.agent_id, plain.body.agent_id]);
    const { token: _token, ...withoutToken } = custom.body;
    expect(list.body.agents).to.deep.include(withoutToken);
    const text = JSON.stringify(list.body);
    expect(text).not.to.include('"token"');
    expect(text).not.to.include(plain.body.token).and.not.to.include(custom.body.token);
  });

  it('shows an agent online in the list while its client is connected', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const agent = await bridge.agent(org.org_id);
    const other = await bridge.agent(org.org_id, 'Other Agent');
    const client = await bridge.connectAgent(agent.token);
    await client.expectNothingBeforePong();

    const { body } = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, { schema: 'AgentList' });
    const online = Object.fromEntries(
      body.agents.map((a: { agent_id: string; online: boolean }) => [a.agent_id, a.online]),
    );
    expect(online).to.deep.equal({ [agent.agent_id]: true, [other.agent_id]: false });

    client.close();
    await bridge.untilAgentOnline(agent.agent_id, false);
  });

  it('answers 400 INVALID_REQUEST naming the field for a bad body', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const cases: [what: string, path: string, body: unknown, field: RegExp][] = [
      ['missing name', '/admin/v1/organizations', { description: 'x' }, /name/],
      ['empty body', '/admin/v1/organizations', undefined, /name/],
      ['empty object', `/admin/v1/organizations/${org.org_id}/apps`, {}, /name/],
      ['malformed JSON', '/admin/v1/organizations', '{"name":', /JSON/],
      ['an empty name', '/admin/v1/organizations', { name: '' }, /name/],
      ['ttl_days 0', `/admin/v1/organizations/${org.org_id}/agents`, { name: 'A', ttl_days: 0 }, /ttl_days/],
      ["ttl_days 'x'", `/admin/v1/organizations/${org.org_id}/agents`, { name: 'A', ttl_days: 'x' }, /ttl_days/],
      ['an extra field', `/admin/v1/organizations/${org.org_id}/apps`, { name: 'A', colour: 'red' }, /colour/],
      ['a name of the wrong type', '/admin/v1/organizations', { name: 42 }, /name/],
    ];
    for (const [what, path, body, field] of cases) {
      const res = await bridge.http('POST', path, { body });
      expect(res.status, what).to.equal(400);
      expect(res.body.code, what).to.equal('INVALID_REQUEST');
      expect(res.body.error, what).to.match(field);
    }
    const orgs = await bridge.http('GET', '/admin/v1/organizations', { schema: 'OrganizationList' });
    expect(orgs.body.organizations).to.have.length(1);
  });

  it('answers 404 NOT_FOUND for an unknown organization', async function () {
    const bridge = await startTestBridge();
    await bridge.org();
    for (const [method, path, body] of [
      ['POST', '/admin/v1/organizations/no-such-org/apps', { name: 'A' }],
      ['POST', '/admin/v1/organizations/no-such-org/agents', { name: 'A' }],
      ['GET', '/admin/v1/organizations/no-such-org/apps'],
      ['GET', '/admin/v1/organizations/no-such-org/agents'],
    ] as const) {
      const res = await bridge.http(method, path, { body });
      expect(res.status, `${method} ${path}`).to.equal(404);
      expect(res.body.code).to.equal('NOT_FOUND');
      expect(res.body.error).to.include('no-such-org');
    }
  });

  it('replaces an allowlist with the sorted, de-duplicated list, clears it with null, and refuses foreign apps and unknown agents', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const [zed, alpha] = [await bridge.app(org.org_id, 'Zed App'), await bridge.app(org.org_id, 'Alpha App')];
    const agent = await bridge.agent(org.org_id);
    const path = `/admin/v1/agents/${agent.agent_id}/allowlist`;

    const set = await bridge.http('PUT', path, {
      body: { app_ids: [zed.app_id, alpha.app_id, zed.app_id] },
      schema: 'Agent',
    });
    expect(set.status).to.equal(200);
    expect(set.body).to.include({ agent_id: agent.agent_id, org_id: org.org_id });
    expect(set.body.allowlist).to.deep.equal([alpha.app_id, zed.app_id]);
    const listed = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, { schema: 'AgentList' });
    expect(listed.body.agents[0].allowlist).to.deep.equal([alpha.app_id, zed.app_id]);

    const cleared = await bridge.http('PUT', path, { body: { app_ids: null }, schema: 'Agent' });
    expect(cleared.status).to.equal(200);
    expect(cleared.body.allowlist).to.equal(null);

    const otherOrg = await bridge.org('Other Org');
    const foreign = await bridge.app(otherOrg.org_id, 'Foreign App');
    const refused = await bridge.http('PUT', path, { body: { app_ids: [alpha.app_id, foreign.app_id] } });
    expect(refused.status).to.equal(400);
    expect(refused.body.code).to.equal('INVALID_REQUEST');
    expect(refused.body.error).to.include(foreign.app_id);
    const after = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, { schema: 'AgentList' });
    expect(after.body.agents[0].allowlist).to.equal(null);

    const unknown = await bridge.http('PUT', '/admin/v1/agents/no-such-agent/allowlist', { body: { app_ids: null } });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.code).to.equal('NOT_FOUND');
  });

  it('answers 404 NOT_FOUND for unknown routes (a wrong method is 405: below), and GET /healthz 200 with its version without a token', async function () {
    const bridge = await startTestBridge();
    for (const [method, path, token] of [
      ['GET', '/nope', null],
      ['GET', '/v1/nope', ADMIN_TOKEN],
      ['GET', '/admin/v1/nope', ADMIN_TOKEN],
      ['POST', '/admin/v1/nope', ADMIN_TOKEN],
    ] as const) {
      const res = await bridge.http(method, path, { token });
      expect(res.status, `${method} ${path}`).to.equal(404);
      expect(res.body.code, `${method} ${path}`).to.equal('NOT_FOUND');
    }
    const health = await bridge.http('GET', '/healthz', { token: null, schema: 'Health' });
    // It says which version answers: package.json's, as `bridge --version` prints it.
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(health).to.deep.equal({ status: 200, body: { status: 'ok', version } });
  });

  it('has no test clock unless the bridge runs with it', async function () {
    const bridge = await startTestBridge();
    const res = await bridge.http('POST', '/admin/v1/test/clock', { body: { advance_ms: 1000 } });
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('NOT_FOUND');
  });

  it('moves the test clock by advance_ms and fires the timers that fall due', async function () {
    const bridge = await startTestBridge({ testClock: true });
    const read = await bridge.http('POST', '/admin/v1/test/clock', { body: { advance_ms: 0 }, schema: 'ClockNow' });
    expect(read.status).to.equal(200);
    expect(read.body.now).to.equal('2026-11-22T12:00:00.000Z');
    const moved = await bridge.http('POST', '/admin/v1/test/clock', { body: { advance_ms: 1500 }, schema: 'ClockNow' });
    expect(Date.parse(moved.body.now) - Date.parse(read.body.now)).to.equal(1500);

    const { agent, appClient, agentClient } = await bridge.pair();
    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
    await postClockWithHeartbeats(bridge, LIMITS.agentTimeoutMs - 1, [appClient, agentClient]);
    await bridge.http('POST', '/admin/v1/test/clock', { body: { advance_ms: 1 }, schema: 'ClockNow' });
    expect(await appClient.expect('error')).to.include({ event_id, agent_id: agent.agent_id, code: 'AGENT_TIMEOUT' });

    for (const body of [{ advance_ms: -1 }, { advance_ms: 1.5 }, { advance_ms: '10' }, {}]) {
      const bad = await bridge.http('POST', '/admin/v1/test/clock', { body });
      expect(bad.status, JSON.stringify(body)).to.equal(400);
      expect(bad.body.code).to.equal('INVALID_REQUEST');
      expect(bad.body.error).to.match(/advance_ms/);
    }
  });

  it('answers a wrong method on a path that exists with 405 METHOD_NOT_ALLOWED and Allow, and a path that does not with 404', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const call = async (method: string, path: string) => {
      const res = await fetch(new URL(path, bridge.url), {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      return { status: res.status, allow: res.headers.get('allow'), body: (await res.json()) as any };
    };
    const wrong = await call('PUT', '/admin/v1/organizations');
    expect(wrong).to.deep.include({ status: 405, allow: 'HEAD, GET, POST' });
    expect(wrong.body).to.deep.equal({
      code: 'METHOD_NOT_ALLOWED',
      error: 'PUT is not supported on /admin/v1/organizations; it takes HEAD, GET, POST.',
    });
    expect(await call('POST', `/admin/v1/organizations/${org.org_id}`)).to.deep.include({
      status: 405,
      allow: 'HEAD, GET, PATCH, DELETE',
    });
    expect((await call('DELETE', '/healthz')).status).to.equal(405);
    const missing = await call('GET', '/admin/v1/nothing-here');
    expect(missing).to.deep.include({ status: 404, allow: null });
    expect(missing.body.code).to.equal('NOT_FOUND');
  });

  it('reads one organization, app and agent as their lists show them, deactivated ones too; 404 for an unknown id', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org('Readable');
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    await bridge.http('POST', `/admin/v1/apps/${app.app_id}/deactivate`);
    const listed = {
      org: (await bridge.http('GET', '/admin/v1/organizations')).body.organizations[0],
      app: (await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/apps`)).body.apps[0],
      agent: (await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/agents`)).body.agents[0],
    };
    const one = {
      org: await bridge.http('GET', `/admin/v1/organizations/${org.org_id}`, { schema: 'Organization' }),
      app: await bridge.http('GET', `/admin/v1/apps/${app.app_id}`, { schema: 'App' }),
      agent: await bridge.http('GET', `/admin/v1/agents/${agent.agent_id}`, { schema: 'Agent' }),
    };
    expect(one.org.body).to.deep.equal(listed.org);
    expect(one.app.body).to.deep.equal(listed.app);
    expect(one.app.body.active).to.equal(false);
    expect(one.agent.body).to.deep.equal(listed.agent);
    expect(JSON.stringify(one)).not.to.include(app.token);
    for (const path of ['/admin/v1/organizations/nope', '/admin/v1/apps/app_nope', '/admin/v1/agents/agent_nope']) {
      const missing = await bridge.http('GET', path);
      expect(missing.status, path).to.equal(404);
      expect(missing.body.code).to.equal('NOT_FOUND');
    }
  });
});
