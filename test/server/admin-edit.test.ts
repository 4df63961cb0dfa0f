// Editing registrations (PATCH of organizations, apps and agents; T5): the new name, description or TTL shows at
// once in the listings and the agent directory and survives a restart; ids, tokens and live connections stay; a new
// ttl_days applies to sessions created afterwards only.
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { DAY_MS, iso } from '../../src/shared/time.js';
import { disconnect, startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { exchange } from '../helpers/events.js';

async function sessionOf(bridge: TestBridge, sessionKey: string) {
  const res = await bridge.http('GET', '/admin/v1/sessions', { schema: 'SessionList' });
  return res.body.sessions.find((s: { session_key: string }) => s.session_key === sessionKey);
}

describeEachDatabase('editing organizations, apps and agents', function (db) {
  const start = () => startTestBridge({ databaseUrl: db.url() });

  it('renames an organization and an app: the listings show the new names at once and after a restart; ids, tokens and connections stay', async function () {
    const first = await start();
    const { org, app, agent, appClient, agentClient } = await first.pair();

    const renamed = await first.http('PATCH', `/admin/v1/organizations/${org.org_id}`, {
      body: { name: 'Acme Learning Europe' },
      schema: 'Organization',
    });
    expect(renamed.status).to.equal(200);
    expect(renamed.body).to.deep.equal({ ...org, name: 'Acme Learning Europe' });
    const app2 = await first.http('PATCH', `/admin/v1/apps/${app.app_id}`, {
      body: { name: 'Classroom App (iOS)' },
      schema: 'App',
    });
    expect(app2.status).to.equal(200);
    expect(app2.body).to.include({ app_id: app.app_id, name: 'Classroom App (iOS)', online: true, active: true });

    const orgs = await first.http('GET', '/admin/v1/organizations', { schema: 'OrganizationList' });
    expect(orgs.body.organizations).to.deep.equal([renamed.body]);
    const apps = await first.http('GET', `/admin/v1/organizations/${org.org_id}/apps`, { schema: 'AppList' });
    expect(apps.body.apps.map((a: { name: string }) => a.name)).to.deep.equal(['Classroom App (iOS)']);
    // The connections opened before the renames carry on.
    await exchange(appClient, agentClient, agent.agent_id, 'after-rename');
    await first.close();

    const second = await start();
    expect(
      (await second.http('GET', '/admin/v1/organizations', { schema: 'OrganizationList' })).body.organizations,
    ).to.deep.equal([renamed.body]);
    const appsAfter = await second.http('GET', `/admin/v1/organizations/${org.org_id}/apps`, { schema: 'AppList' });
    expect(appsAfter.body.apps.map((a: { name: string }) => a.name)).to.deep.equal(['Classroom App (iOS)']);
    const reconnected = await second.connectApp(app.token);
    await exchange(reconnected, await second.connectAgent(agent.token), agent.agent_id, 'after-restart');
  });

  it('renames a deactivated app', async function () {
    const bridge = await start();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    await bridge.http('POST', `/admin/v1/apps/${app.app_id}/deactivate`, { schema: 'App' });
    const res = await bridge.http('PATCH', `/admin/v1/apps/${app.app_id}`, {
      body: { name: 'Retired App' },
      schema: 'App',
    });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ name: 'Retired App', active: false });
  });

  it("changes only the agent fields given; the app's agent directory shows the new name and description at once, and after a restart", async function () {
    const first = await start();
    const { org, app, agent } = await first.pair();
    const directory = async (bridge: TestBridge) =>
      (
        await bridge.http('GET', `/v1/organizations/${org.org_id}/agents`, {
          token: app.token,
          schema: 'AgentDirectory',
        })
      ).body.agents;

    const described = await first.http('PATCH', `/admin/v1/agents/${agent.agent_id}`, {
      body: { description: 'Explains maths step by step.' },
      schema: 'Agent',
    });
    expect(described.status).to.equal(200);
    expect(described.body).to.include({
      agent_id: agent.agent_id,
      name: agent.name,
      description: 'Explains maths step by step.',
      ttl_days: agent.ttl_days,
      online: true,
    });
    const renamed = await first.http('PATCH', `/admin/v1/agents/${agent.agent_id}`, {
      body: { name: 'Maths Tutor' },
      schema: 'Agent',
    });
    expect(renamed.body).to.include({ name: 'Maths Tutor', description: 'Explains maths step by step.' });
    expect(await directory(first)).to.deep.equal([
      {
        id: agent.agent_id,
        name: 'Maths Tutor',
        description: 'Explains maths step by step.',
        status: 'online',
        allowlisted: true,
      },
    ]);
    const listed = await first.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, { schema: 'AgentList' });
    expect(listed.body.agents).to.deep.equal([renamed.body]);
    await first.close();

    const second = await start();
    expect(await directory(second)).to.deep.equal([
      {
        id: agent.agent_id,
        name: 'Maths Tutor',
        description: 'Explains maths step by step.',
        status: 'offline',
        allowlisted: true,
      },
    ]);
  });

  it('gives a new ttl_days to the sessions created afterwards, while a live session keeps the expiry it was created with (T5)', async function () {
    const bridge = await start();
    const { app, agent, appClient, agentClient } = await bridge.pair();
    const before = bridge.clock.now();
    const live = await exchange(appClient, agentClient, agent.agent_id, 'lesson-1');
    expect((await sessionOf(bridge, live.session_key)).expires_at).to.equal(
      iso(before + LIMITS.sessionTtlDefaultDays * DAY_MS),
    );

    const res = await bridge.http('PATCH', `/admin/v1/agents/${agent.agent_id}`, {
      body: { ttl_days: 1 },
      schema: 'Agent',
    });
    expect(res.body.ttl_days).to.equal(1);
    bridge.clock.advance(60_000);
    const later = bridge.clock.now();
    const fresh = await exchange(appClient, agentClient, agent.agent_id, 'lesson-2');
    expect((await sessionOf(bridge, fresh.session_key)).expires_at).to.equal(iso(later + DAY_MS));

    // The live session is reused by its thread's next event and keeps its first expiry, past the new TTL.
    await disconnect(bridge, appClient, agentClient);
    bridge.clock.advance(DAY_MS);
    const reused = await exchange(
      await bridge.connectApp(app.token),
      await bridge.connectAgent(agent.token),
      agent.agent_id,
      'lesson-1',
    );
    expect(reused.session_key).to.equal(live.session_key);
    expect(await sessionOf(bridge, live.session_key)).to.include({
      created_at: iso(before),
      expires_at: iso(before + LIMITS.sessionTtlDefaultDays * DAY_MS),
    });
    expect(await sessionOf(bridge, fresh.session_key)).to.equal(undefined); // expired with the new, shorter TTL
  });

  it('answers 404 NOT_FOUND for an unknown organization, app or agent, and changes nothing', async function () {
    const bridge = await start();
    for (const [path, body, what] of [
      ['/admin/v1/organizations/nope-abc123', { name: 'X' }, /Organization nope-abc123/],
      ['/admin/v1/apps/nope-abc123', { name: 'X' }, /App nope-abc123/],
      ['/admin/v1/agents/nope-abc123', { name: 'X' }, /Agent nope-abc123/],
    ] as const) {
      const res = await bridge.http('PATCH', path, { body });
      expect(res.status, path).to.equal(404);
      expect(res.body.code).to.equal('NOT_FOUND');
      expect(res.body.error).to.match(what);
    }
    const audit = await bridge.http('GET', '/admin/v1/audit', { schema: 'AuditLog' });
    expect(audit.body.entries).to.deep.equal([]);
  });

  it('answers 400 INVALID_REQUEST naming the field for a body it cannot take, and changes nothing', async function () {
    const bridge = await start();
    const org = await bridge.org('Kept Name');
    const app = await bridge.app(org.org_id, 'Kept App');
    const agent = await bridge.agent(org.org_id, 'Kept Agent');
    const cases: [path: string, body: unknown, error: RegExp][] = [
      [`/admin/v1/organizations/${org.org_id}`, {}, /name/],
      [`/admin/v1/organizations/${org.org_id}`, { name: '' }, /name/],
      [`/admin/v1/organizations/${org.org_id}`, { name: 'x'.repeat(129) }, /name/],
      [`/admin/v1/organizations/${org.org_id}`, { name: 'A', org_id: 'other' }, /org_id/],
      [`/admin/v1/apps/${app.app_id}`, { name: 42 }, /name/],
      [`/admin/v1/apps/${app.app_id}`, { name: 'A', active: true }, /active/],
      [`/admin/v1/agents/${agent.agent_id}`, {}, /fewer than 1|minProperties|properties/],
      [`/admin/v1/agents/${agent.agent_id}`, { ttl_days: 0 }, /ttl_days/],
      [`/admin/v1/agents/${agent.agent_id}`, { ttl_days: 3651 }, /ttl_days/],
      [`/admin/v1/agents/${agent.agent_id}`, { description: 'd'.repeat(1025) }, /description/],
      [`/admin/v1/agents/${agent.agent_id}`, { name: 'A', allowlist: null }, /allowlist/],
    ];
    for (const [path, body, error] of cases) {
      const res = await bridge.http('PATCH', path, { body });
      expect(res.status, `${path} ${JSON.stringify(body).slice(0, 40)}`).to.equal(400);
      expect(res.body.code).to.equal('INVALID_REQUEST');
      expect(res.body.error, JSON.stringify(body).slice(0, 40)).to.match(error);
    }
    const agents = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, { schema: 'AgentList' });
    expect(agents.body.agents[0]).to.include({ name: 'Kept Agent', description: '', ttl_days: agent.ttl_days });
    expect((await bridge.http('GET', '/admin/v1/organizations')).body.organizations[0].name).to.equal('Kept Name');
  });
  it('refuses names and descriptions it could not give back as they were (a lone surrogate, NUL, a control character in a name) with 400 on create and change, and gives back every other text as it was, after a restart (H7)', async function () {
    const bridge = await start();
    const org = await bridge.org('Kept Name');
    const app = await bridge.app(org.org_id, 'Kept App');
    const agent = await bridge.agent(org.org_id, 'Kept Agent');
    const notAllowed = /^Invalid request body: (name|description): has characters that are not allowed \(must match /;
    const refused: [method: string, path: string, body: Record<string, string>][] = [];
    for (const text of ['\uD800', 'a\uDC00b', 'x\uDBFF', '\u0000', 'nul\u0000inside']) {
      refused.push(
        ['POST', '/admin/v1/organizations', { name: text }],
        ['PATCH', `/admin/v1/organizations/${org.org_id}`, { name: text }],
        ['POST', `/admin/v1/organizations/${org.org_id}/apps`, { name: text }],
        ['PATCH', `/admin/v1/apps/${app.app_id}`, { name: text }],
        ['POST', `/admin/v1/organizations/${org.org_id}/agents`, { name: text }],
        ['POST', `/admin/v1/organizations/${org.org_id}/agents`, { name: 'Fine', description: text }],
        ['PATCH', `/admin/v1/agents/${agent.agent_id}`, { name: text }],
        ['PATCH', `/admin/v1/agents/${agent.agent_id}`, { description: text }],
      );
    }
    // A name is one line; a description may have tabs and line breaks, nothing else of the kind.
    for (const text of ['line\nbreak', 'tab\there', '\u001b[31mred', '\u0085next', '\u007f'])
      refused.push(['PATCH', `/admin/v1/agents/${agent.agent_id}`, { name: text }]);
    for (const text of ['\u001b[31mred', 'bell\u0007', '\u009b'])
      refused.push(['PATCH', `/admin/v1/agents/${agent.agent_id}`, { description: text }]);
    for (const [method, path, body] of refused) {
      const res = await bridge.http(method, path, { body });
      const what = `${method} ${path} ${JSON.stringify(body)}`;
      expect(res.status, what).to.equal(400);
      expect(res.body.code, what).to.equal('INVALID_REQUEST');
      expect(res.body.error, what).to.match(notAllowed);
    }

    const names = [
      'Ünïcödé 日本語 😀 𝄞',
      'quotes "and" \\ backslash',
      '\u00a0no-break \u2028 separators \u2029',
      'ﬁ ligature Å (NFC) vs A\u030a (NFD)',
    ];
    const description = 'Lines\nand\r\ncarriage returns,\ttabs, 😀 and \u2028.';
    const renamedOrg = (
      await bridge.http('PATCH', `/admin/v1/organizations/${org.org_id}`, { body: { name: names[0] } })
    ).body;
    const renamedApp = (await bridge.http('PATCH', `/admin/v1/apps/${app.app_id}`, { body: { name: names[1] } })).body;
    const changed = (
      await bridge.http('PATCH', `/admin/v1/agents/${agent.agent_id}`, { body: { name: names[2], description } })
    ).body;
    const created = await bridge.agent(org.org_id, names[3]!, { description });
    expect([renamedOrg.name, renamedApp.name, changed.name, changed.description, created.name]).to.deep.equal([
      names[0],
      names[1],
      names[2],
      description,
      names[3],
    ]);
    await bridge.close();

    const again = await start();
    expect(
      (await again.http('GET', '/admin/v1/organizations')).body.organizations.map((o: { name: string }) => o.name),
    ).to.deep.equal([names[0]]);
    expect(
      (await again.http('GET', `/admin/v1/organizations/${org.org_id}/apps`)).body.apps.map(
        (a: { name: string }) => a.name,
      ),
    ).to.deep.equal([names[1]]);
    const agents = (await again.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, { schema: 'AgentList' }))
      .body.agents;
    expect(agents.map((a: { name: string; description: string }) => [a.name, a.description])).to.have.deep.members([
      [names[2], description],
      [names[3], description],
    ]);
  });
});
