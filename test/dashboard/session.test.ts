// Dashboard sessions (spec/openapi.yaml /dashboard/session, decisions D1–D4): sign-in with the admin token sets an
// HttpOnly, SameSite=Strict cookie; the admin API takes that cookie, and a write by cookie needs the session's
// X-CSRF-Token from the bridge's own origin; sessions end at sign-out or after 12 hours, and are kept in the database
// (across restarts, and for every node: test/cluster/sign-ins.test.ts), at most ADMIN_SESSIONS_MAX of them.
import { expect } from 'chai';
import { ADMIN_SESSIONS_MAX, AdminSessions } from '../../src/http/admin-sessions.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { SignInStore } from '../../src/store/sign-ins.js';
import { ADMIN_TOKEN, startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { send, signIn } from './cookie-http.js';

const HOUR = 3_600_000;

/** Admin writes with a body each accepts, on an organization, app and agent that exist. */
async function writes(bridge: TestBridge): Promise<[method: string, path: string, body?: unknown][]> {
  const org = await bridge.org();
  const app = await bridge.app(org.org_id);
  const agent = await bridge.agent(org.org_id);
  return [
    ['POST', '/admin/v1/organizations', { name: 'By Cookie' }],
    ['POST', `/admin/v1/organizations/${org.org_id}/apps`, { name: 'App' }],
    ['POST', `/admin/v1/organizations/${org.org_id}/agents`, { name: 'Agent' }],
    ['PUT', `/admin/v1/agents/${agent.agent_id}/allowlist`, { app_ids: [app.app_id] }],
    ['POST', `/admin/v1/apps/${app.app_id}/rotate-token`],
    ['POST', `/admin/v1/agents/${agent.agent_id}/deactivate`],
    ['DELETE', `/admin/v1/organizations/${org.org_id}`], // last: it removes what the others write to
  ];
}

describe('dashboard sessions', function () {
  it('signs in with the admin token: an HttpOnly, SameSite=Strict cookie for 12 hours, and a CSRF token for the page', async function () {
    const bridge = await startTestBridge();
    const session = await signIn(bridge);
    expect(session.setCookie).to.match(
      /^bridge_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/,
    );
    expect(session.expiresAt).to.equal('2026-11-23T00:00:00.000Z');

    const read = await send(bridge, 'GET', '/dashboard/session', {
      cookie: session.cookie,
      schema: 'DashboardSession',
    });
    expect(read.status).to.equal(200);
    // The fingerprint is how the audit trail names this session: its sign-in is the newest entry.
    const audit = await send(bridge, 'GET', '/admin/v1/audit?limit=1', { cookie: session.cookie, schema: 'AuditLog' });
    expect(audit.body.entries[0]).to.deep.include({
      action: 'dashboard.sign_in',
      actor: { kind: 'dashboard_session', session: read.body.fingerprint },
    });
    expect(read.body).to.deep.equal({
      csrf_token: session.csrf,
      expires_at: session.expiresAt,
      fingerprint: read.body.fingerprint,
    });
    expect(session.cookie).not.to.include(read.body.fingerprint);
    expect(session.cookie).not.to.include(session.csrf);

    for (const cookie of [undefined, 'bridge_session=not-a-session', `bridge_session=${session.csrf}`]) {
      const res = await send(bridge, 'GET', '/dashboard/session', { cookie });
      expect(res.status, String(cookie)).to.equal(401);
      expect(res.body.code).to.equal('UNAUTHORIZED');
    }
  });

  it("refuses a wrong admin token (401), a malformed body (400) and another site's origin (403), and sets no cookie", async function () {
    const bridge = await startTestBridge();
    const cases: [what: string, status: number, code: string, body: unknown, origin?: string][] = [
      ['a wrong token', 401, 'UNAUTHORIZED', { admin_token: `${ADMIN_TOKEN}x` }],
      ['an app token', 401, 'UNAUTHORIZED', { admin_token: (await bridge.app((await bridge.org()).org_id)).token }],
      ['no token', 400, 'INVALID_REQUEST', {}],
      ['an extra field', 400, 'INVALID_REQUEST', { admin_token: ADMIN_TOKEN, remember: true }],
      ['another site', 403, 'FORBIDDEN', { admin_token: ADMIN_TOKEN }, 'https://evil.example'],
      ['an opaque origin', 403, 'FORBIDDEN', { admin_token: ADMIN_TOKEN }, 'null'],
    ];
    for (const [what, status, code, body, origin] of cases) {
      const res = await send(bridge, 'POST', '/dashboard/session', { body, ...(origin ? { origin } : {}) });
      expect(res.status, what).to.equal(status);
      expect(res.body.code, what).to.equal(code);
      expect(res.headers.get('set-cookie'), what).to.equal(null);
    }
    const guess = 'a-guessed-token-0123456789';
    expect(
      JSON.stringify((await send(bridge, 'POST', '/dashboard/session', { body: { admin_token: guess } })).body),
    ).not.to.include(guess);
  });

  it('answers ADMIN_API_DISABLED to sign-in, session reads and sign-out when the admin API is off', async function () {
    const bridge = await startTestBridge({ adminToken: undefined });
    for (const [method, body] of [['POST', { admin_token: ADMIN_TOKEN }], ['GET'], ['DELETE']] as const) {
      const res = await send(bridge, method, '/dashboard/session', body ? { body } : {});
      expect(res.status, method).to.equal(404);
      expect(res.body.code, method).to.equal('ADMIN_API_DISABLED');
      expect(res.headers.get('set-cookie')).to.equal(null);
    }
  });

  it("admits admin reads by cookie, and writes only with the session's X-CSRF-Token from the bridge's own origin", async function () {
    const bridge = await startTestBridge();
    const routes = await writes(bridge);
    const session = await signIn(bridge);
    const other = await signIn(bridge);
    const { cookie, csrf } = session;

    const orgs = await send(bridge, 'GET', '/admin/v1/organizations', { cookie, schema: 'OrganizationList' });
    expect(orgs.status).to.equal(200);
    expect(orgs.body.organizations).to.have.length(1);
    expect((await send(bridge, 'GET', '/admin/v1/events', { cookie, schema: 'EventLog' })).status).to.equal(200);

    for (const [method, path, body] of routes) {
      for (const [what, extra] of [
        ['no CSRF token', {}],
        ['a wrong CSRF token', { csrf: `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}` }],
        ["another session's CSRF token", { csrf: other.csrf }],
        ['another origin', { csrf, origin: 'http://evil.example' }],
        ['the same host on another port', { csrf, origin: `http://127.0.0.1:${bridge.port + 1}` }],
        ['an opaque origin', { csrf, origin: 'null' }],
      ] as const) {
        const res = await send(bridge, method, path, { cookie, body, ...extra });
        expect(res.status, `${method} ${path} with ${what}`).to.equal(403);
        expect(res.body.code).to.equal('FORBIDDEN');
        expect(res.body.error).to.match(/X-CSRF-Token|may not change/);
      }
    }
    expect(
      (await bridge.http('GET', '/admin/v1/organizations', { schema: 'OrganizationList' })).body.organizations,
    ).to.have.length(1);

    const expected = [201, 201, 201, 200, 200, 200, 200];
    for (const [i, [method, path, body]] of routes.entries()) {
      const origin = i % 2 ? bridge.url : undefined; // browsers send Origin with most writes, not all
      const res = await send(bridge, method, path, { cookie, csrf, body, ...(origin ? { origin } : {}) });
      expect(res.status, `${method} ${path}`).to.equal(expected[i]);
    }
    const bogus = await send(bridge, 'POST', '/admin/v1/organizations', {
      cookie: 'bridge_session=forged',
      csrf,
      body: { name: 'X' },
    });
    expect(bogus.status).to.equal(401);
    expect(bogus.body.code).to.equal('UNAUTHORIZED');
  });

  it('lets an Authorization header decide alone: a wrong one fails even with a cookie, a right one needs no CSRF token', async function () {
    const bridge = await startTestBridge();
    const { cookie } = await signIn(bridge);
    const wrong = await send(bridge, 'GET', '/admin/v1/organizations', { cookie, bearer: 'not-the-admin-token' });
    expect(wrong.status).to.equal(401);
    expect(wrong.body.code).to.equal('UNAUTHORIZED');
    const bearer = await send(bridge, 'POST', '/admin/v1/organizations', {
      bearer: ADMIN_TOKEN,
      origin: 'http://evil.example',
      body: { name: 'CLI' },
      schema: 'Organization',
    });
    expect(bearer.status).to.equal(201);
  });

  it('signs out only with the CSRF token, then forgets the session and clears the cookie', async function () {
    const bridge = await startTestBridge();
    const { cookie, csrf } = await signIn(bridge);
    const kept = await signIn(bridge);

    const refused = await send(bridge, 'DELETE', '/dashboard/session', { cookie });
    expect(refused.status).to.equal(403);
    expect((await send(bridge, 'GET', '/dashboard/session', { cookie })).status).to.equal(200);

    const out = await send(bridge, 'DELETE', '/dashboard/session', { cookie, csrf, origin: bridge.url });
    expect(out.status).to.equal(204);
    expect(out.headers.get('set-cookie')).to.equal('bridge_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
    for (const [method, path] of [
      ['GET', '/dashboard/session'],
      ['GET', '/admin/v1/organizations'],
      ['DELETE', '/dashboard/session'],
    ] as const) {
      const res = await send(bridge, method, path, { cookie, csrf });
      expect(res.status, `${method} ${path}`).to.equal(401);
      expect(res.body.code).to.equal('UNAUTHORIZED');
    }
    expect(
      (await send(bridge, 'GET', '/dashboard/session', { cookie: kept.cookie })).status,
      'another session',
    ).to.equal(200);
  });

  it("ends a session 12 hours after sign-in on the bridge's clock", async function () {
    const bridge = await startTestBridge();
    const { cookie, csrf } = await signIn(bridge);
    bridge.clock.advance(12 * HOUR - 1);
    expect((await send(bridge, 'GET', '/admin/v1/organizations', { cookie })).status).to.equal(200);
    expect(
      (await send(bridge, 'POST', '/admin/v1/organizations', { cookie, csrf, body: { name: 'Late' } })).status,
    ).to.equal(201);
    bridge.clock.advance(1);
    for (const [method, path, body] of [
      ['GET', '/dashboard/session'],
      ['GET', '/admin/v1/organizations'],
      ['POST', '/admin/v1/organizations', { name: 'Too late' }],
    ] as const) {
      const res = await send(bridge, method, path, { cookie, csrf, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}`).to.equal(401);
      expect(res.body.code).to.equal('UNAUTHORIZED');
    }
    const fresh = await signIn(bridge);
    expect(fresh.expiresAt).to.equal(new Date(bridge.clock.now() + 12 * HOUR).toISOString());
  });

  it("replaces the browser's previous session when it signs in again", async function () {
    const bridge = await startTestBridge();
    const first = await signIn(bridge);
    const second = await signIn(bridge, { cookie: first.cookie });
    expect(second.cookie).not.to.equal(first.cookie);
    expect((await send(bridge, 'GET', '/dashboard/session', { cookie: first.cookie })).status).to.equal(401);
    expect((await send(bridge, 'GET', '/dashboard/session', { cookie: second.cookie })).status).to.equal(200);
  });
});

describeEachDatabase('dashboard sign-ins kept in the database', function (db) {
  const start = () => startTestBridge({ databaseUrl: db.url() });

  it('keeps a sign-in across a restart of the bridge, its CSRF token and expiry unchanged', async function () {
    const first = await start();
    const signedIn = await signIn(first);
    const before = (await send(first, 'GET', '/dashboard/session', { cookie: signedIn.cookie })).body;
    await first.close();

    const second = await start();
    const { cookie, csrf } = signedIn;
    const after = await send(second, 'GET', '/dashboard/session', { cookie, schema: 'DashboardSession' });
    expect(after.status).to.equal(200);
    expect(after.body).to.deep.equal(before);
    const made = await send(second, 'POST', '/admin/v1/organizations', { cookie, csrf, body: { name: 'After' } });
    expect(made.status).to.equal(201);
  });

  it(`keeps at most ${ADMIN_SESSIONS_MAX} live sign-ins (here 3): one more ends the oldest, and the others stay`, async function () {
    const knex = await db.open({ migrate: true });
    const clock = new AdjustableClock({ frozen: true, start: Date.parse('2026-11-22T12:00:00.000Z') });
    const sessions = new AdminSessions(new SignInStore(knex), clock, 3);
    const opened = [];
    for (let i = 0; i < 4; i++) {
      opened.push((await sessions.open()).cookie);
      clock.advance(1);
    }
    const live = await Promise.all(opened.map(async (cookie) => Boolean(await sessions.find(cookie))));
    expect(live).to.deep.equal([false, true, true, true]);
    expect(await knex('dashboard_sign_ins').count({ n: '*' })).to.deep.equal([{ n: 3 }]);
  });
});
