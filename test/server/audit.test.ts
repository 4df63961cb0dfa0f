// The audit trail (D10): every admin change and every dashboard sign-in and sign-out is one row, written before
// the API answers, naming who (the admin token, or a dashboard session by a fingerprint), what and on what, never a
// token or a session id; read newest first by GET /admin/v1/audit, swept after AUDIT_LOG_RETENTION_DAYS.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { QUERY_PARAMETERS } from '../../generated/index.js';
import type { Config } from '../../src/config.js';
import { SWEEP_INTERVAL_MS } from '../../src/server.js';
import { DAY_MS } from '../../src/shared/time.js';
import { ADMIN_TOKEN, startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { capturedLog } from '../helpers/log.js';
import { sample, scrape } from '../helpers/metrics.js';
import { send, signIn } from '../dashboard/cookie-http.js';

const ADMIN = { kind: 'admin_token', session: null };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function trail(bridge: TestBridge, query = ''): Promise<{ entries: any[]; next_before: number | null }> {
  const res = await bridge.http('GET', `/admin/v1/audit${query}`, { schema: 'AuditLog' });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body;
}

describeEachDatabase('the audit trail', function (db) {
  const start = (overrides: Partial<Config> = {}, log?: ReturnType<typeof capturedLog>['log']) =>
    startTestBridge({ databaseUrl: db.url(), testClock: true, ...overrides }, log ? { log } : {});

  it('records every admin change with the admin token as actor, newest first, with what changed and never a token', async function () {
    const bridge = await start();
    const at = new Date(bridge.clock.now()).toISOString();
    const org = await bridge.org('Acme');
    const app = await bridge.app(org.org_id, 'Classroom');
    const agent = await bridge.agent(org.org_id, 'Tutor', { ttl_days: 7 });
    const ok = async (method: string, path: string, body?: unknown) =>
      expect((await bridge.http(method, path, { body })).status, `${method} ${path}`).to.equal(200);
    await ok('PATCH', `/admin/v1/organizations/${org.org_id}`, { name: 'Acme Europe' });
    await ok('PATCH', `/admin/v1/apps/${app.app_id}`, { name: 'Classroom iOS' });
    await ok('PATCH', `/admin/v1/agents/${agent.agent_id}`, { ttl_days: 30 });
    await ok('PUT', `/admin/v1/agents/${agent.agent_id}/allowlist`, { app_ids: [app.app_id] });
    const appRotated = (await bridge.http('POST', `/admin/v1/apps/${app.app_id}/rotate-token`)).body;
    const agentRotated = (await bridge.http('POST', `/admin/v1/agents/${agent.agent_id}/rotate-token`)).body;
    await ok('POST', `/admin/v1/test/clock`, { advance_ms: 1000 });
    await ok('POST', `/admin/v1/apps/${app.app_id}/deactivate`);
    await ok('POST', `/admin/v1/agents/${agent.agent_id}/deactivate`);
    await ok('DELETE', `/admin/v1/organizations/${org.org_id}`);

    const { entries, next_before } = await trail(bridge);
    expect(next_before).to.equal(null);
    const later = new Date(bridge.clock.now()).toISOString();
    expect(entries.map(({ audit_id: _, ...rest }) => rest)).to.deep.equal([
      {
        at: later,
        actor: ADMIN,
        action: 'organization.delete',
        target: org.org_id,
        detail: { name: 'Acme Europe', apps: 1, agents: 1 },
      },
      { at: later, actor: ADMIN, action: 'agent.deactivate', target: agent.agent_id, detail: { name: 'Tutor' } },
      { at: later, actor: ADMIN, action: 'app.deactivate', target: app.app_id, detail: { name: 'Classroom iOS' } },
      { at: later, actor: ADMIN, action: 'test_clock.advance', target: null, detail: { advance_ms: 1000, now: later } },
      {
        at,
        actor: ADMIN,
        action: 'agent.rotate_token',
        target: agent.agent_id,
        detail: { previous_token_expires_at: agentRotated.previous_token_expires_at },
      },
      {
        at,
        actor: ADMIN,
        action: 'app.rotate_token',
        target: app.app_id,
        detail: { previous_token_expires_at: appRotated.previous_token_expires_at },
      },
      { at, actor: ADMIN, action: 'agent.set_allowlist', target: agent.agent_id, detail: { app_ids: [app.app_id] } },
      {
        at,
        actor: ADMIN,
        action: 'agent.update',
        target: agent.agent_id,
        detail: { ttl_days: 30, previous: { ttl_days: 7 } },
      },
      {
        at,
        actor: ADMIN,
        action: 'app.update',
        target: app.app_id,
        detail: { name: 'Classroom iOS', previous: { name: 'Classroom' } },
      },
      {
        at,
        actor: ADMIN,
        action: 'organization.update',
        target: org.org_id,
        detail: { name: 'Acme Europe', previous: { name: 'Acme' } },
      },
      {
        at,
        actor: ADMIN,
        action: 'agent.create',
        target: agent.agent_id,
        detail: { org_id: org.org_id, name: 'Tutor', ttl_days: 7 },
      },
      { at, actor: ADMIN, action: 'app.create', target: app.app_id, detail: { org_id: org.org_id, name: 'Classroom' } },
      { at, actor: ADMIN, action: 'organization.create', target: org.org_id, detail: { name: 'Acme' } },
    ]);
    const ids = entries.map((e) => e.audit_id);
    expect(ids).to.deep.equal([...ids].sort((a, b) => b - a));
    const text = JSON.stringify(entries);
    for (const secret of [ADMIN_TOKEN, app.token, agent.token, appRotated.token, agentRotated.token])
      expect(text).not.to.include(secret);

    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_admin_actions_total', { action: 'organization.create' })).to.equal(1);
    expect(sample(metrics, 'bridge_admin_actions_total', { action: 'agent.update' })).to.equal(1);
  });

  it('records nothing for reads and refused changes', async function () {
    const bridge = await start();
    const org = await bridge.org();
    await bridge.http('GET', '/admin/v1/organizations');
    await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/apps`);
    await bridge.http('PATCH', `/admin/v1/organizations/${org.org_id}`, { body: { name: '' } });
    await bridge.http('PATCH', '/admin/v1/agents/nope-abc123', { body: { name: 'X' } });
    await bridge.http('POST', '/admin/v1/organizations', { body: { name: 'Nope' }, token: `${ADMIN_TOKEN}x` });
    expect((await trail(bridge)).entries.map((e) => e.action)).to.deep.equal(['organization.create']);
  });

  it('names a dashboard session by the first 12 hex digits of the SHA-256 of its id, for its sign-in, changes and sign-out; failed sign-ins are not recorded', async function () {
    const bridge = await start();
    const refused = await send(bridge, 'POST', '/dashboard/session', {
      body: { admin_token: `${ADMIN_TOKEN}x` },
      origin: bridge.url,
    });
    expect(refused.status).to.equal(401);
    const first = await signIn(bridge);
    const second = await signIn(bridge);
    const fingerprint = (cookie: string) =>
      createHash('sha256').update(cookie.split('=')[1]!).digest('hex').slice(0, 12);
    const created = await send(bridge, 'POST', '/admin/v1/organizations', {
      body: { name: 'From The Page' },
      cookie: first.cookie,
      csrf: first.csrf,
      origin: bridge.url,
      schema: 'Organization',
    });
    expect(created.status).to.equal(201);
    expect(
      (
        await send(bridge, 'DELETE', '/dashboard/session', {
          cookie: first.cookie,
          csrf: first.csrf,
          origin: bridge.url,
        })
      ).status,
    ).to.equal(204);

    const one = { kind: 'dashboard_session', session: fingerprint(first.cookie) };
    const two = { kind: 'dashboard_session', session: fingerprint(second.cookie) };
    expect(one.session).not.to.equal(two.session);
    const { entries } = await trail(bridge);
    expect(entries.map((e) => [e.action, e.actor, e.target])).to.deep.equal([
      ['dashboard.sign_out', one, null],
      ['organization.create', one, created.body.org_id],
      ['dashboard.sign_in', two, null],
      ['dashboard.sign_in', one, null],
    ]);
    const text = JSON.stringify(entries);
    for (const secret of [first.cookie.split('=')[1]!, second.cookie.split('=')[1]!, first.csrf, ADMIN_TOKEN])
      expect(text).not.to.include(secret);
    // The page reads the trail with its cookie too.
    const read = await send(bridge, 'GET', '/admin/v1/audit?limit=1', { cookie: second.cookie, schema: 'AuditLog' });
    expect(read.body.entries.map((e: any) => e.action)).to.deep.equal(['dashboard.sign_out']);
  });

  it('pages with limit and before/next_before, every entry once; 400 for a bad limit or before', async function () {
    const bridge = await start();
    for (let i = 0; i < 5; i++) await bridge.org(`Org ${i}`);
    const all = (await trail(bridge)).entries.map((e) => e.audit_id);
    expect(all).to.have.length(5);
    const seen: number[] = [];
    let before: number | null = null;
    let pages = 0;
    do {
      const page: { entries: any[]; next_before: number | null } = await trail(
        bridge,
        `?limit=2${before ? `&before=${before}` : ''}`,
      );
      seen.push(...page.entries.map((e) => e.audit_id));
      before = page.next_before;
      pages++;
    } while (before !== null && pages < 10);
    expect(seen).to.deep.equal(all);
    expect(pages).to.equal(3);

    const { limit } = QUERY_PARAMETERS.listAuditEntries;
    for (const query of [`limit=${limit.maximum + 1}`, 'limit=0', 'before=0', 'before=x', 'before=1.5', 'before=-1']) {
      const res = await bridge.http('GET', `/admin/v1/audit?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.code, query).to.equal('INVALID_REQUEST');
    }
  });

  it('answers 500 INTERNAL_ERROR when the row cannot be written, after the change was made, and logs it', async function () {
    const captured = capturedLog('error');
    const bridge = await start({}, captured.log);
    await (await db.open()).schema.dropTable('admin_audit');
    const res = await bridge.http('POST', '/admin/v1/organizations', { body: { name: 'Unrecorded' } });
    expect(res.status).to.equal(500);
    expect(res.body.code).to.equal('INTERNAL_ERROR');
    const orgs = await bridge.http('GET', '/admin/v1/organizations', { schema: 'OrganizationList' });
    expect(orgs.body.organizations.map((o: { name: string }) => o.name)).to.deep.equal(['Unrecorded']);
    const line = captured.lines().find((l) => /audit trail/.test(l.msg));
    expect(line, JSON.stringify(captured.lines())).to.include({
      action: 'organization.create',
      target: orgs.body.organizations[0].org_id,
    });
  });

  it('deletes entries older than AUDIT_LOG_RETENTION_DAYS in the hourly sweep, and keeps them all with 0', async function () {
    const bridge = await start({ auditLogRetentionDays: 1 });
    const startedAt = bridge.clock.now();
    await bridge.org('Old');
    bridge.clock.advance(12 * 3_600_000);
    await bridge.org('Recent');
    bridge.clock.advance(startedAt + DAY_MS + SWEEP_INTERVAL_MS - bridge.clock.now());
    let names: string[] = [];
    for (let i = 0; i < 50; i++) {
      names = (await trail(bridge)).entries.map((e) => e.detail.name);
      if (!names.includes('Old')) break;
      await sleep(10);
    }
    expect(names).to.deep.equal(['Recent']);
    await bridge.close();

    const keeping = await start({ auditLogRetentionDays: 0 });
    keeping.clock.advance(2 * DAY_MS + SWEEP_INTERVAL_MS);
    for (let i = 0; i < 5; i++) {
      expect((await trail(keeping)).entries.map((e) => e.detail.name)).to.deep.equal(['Recent']);
      await sleep(10);
    }
  });

  it('deletes nothing in a sweep after the wall clock stepped more than a day (F2): says why, counts it, and sweeps again once the clock is back', async function () {
    const captured = capturedLog('warn');
    const bridge = await start({ auditLogRetentionDays: 365 }, captured.log);
    await bridge.org('Kept');
    const refused = async () => sample(await scrape(bridge.url), 'bridge_retention_sweeps_refused_total');
    bridge.clock.stepWall(400 * DAY_MS); // every row is now over a year old, by the wall clock
    bridge.clock.advance(SWEEP_INTERVAL_MS);
    bridge.clock.advance(SWEEP_INTERVAL_MS); // still stepped: refused again, not taken as the new normal
    for (let i = 0; i < 5; i++) {
      expect((await trail(bridge)).entries.map((e) => e.detail.name)).to.deep.equal(['Kept']);
      await sleep(10);
    }
    expect(await refused()).to.equal(2);
    const lines = captured.lines().filter((l) => /^hourly sweep skipped/.test(l.msg));
    expect(lines).to.have.length(2);
    expect(lines[0].msg).to.equal(
      'hourly sweep skipped: the wall clock is 400.0 days ahead of the time that passed since the last sweep; nothing is deleted until it is back within a day of it, or the bridge restarts',
    );
    expect(lines[0]).to.include({ level: 40, stepMs: 400 * DAY_MS });

    bridge.clock.stepWall(-400 * DAY_MS - 3_600_000); // put back, an hour behind: within a day, so the sweep runs
    bridge.clock.advance(SWEEP_INTERVAL_MS);
    expect(await refused()).to.equal(2);
    expect((await trail(bridge)).entries.map((e) => e.detail.name)).to.deep.equal(['Kept']);
  });
});
