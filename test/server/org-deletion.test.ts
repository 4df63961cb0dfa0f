// Deleting an organization (openapi deleteOrganization, H6): its apps' and agents' live connections close at once
// with TOKEN_REVOKED as on deactivation, an agent's events in flight end with AGENT_OFFLINE, then its tokens get
// UNAUTHORIZED and it, its apps and its agents are NOT_FOUND everywhere; other organizations go on; the event log
// keeps its rows; the rows are gone from the database, across a restart.
import { expect } from 'chai';
import { CLOSE_CODES } from '../../generated/index.js';
import { ADMIN_TOKEN, startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { exchange, startEvent } from '../helpers/events.js';
import type { TestClient } from '../helpers/ws-client.js';

async function deleteOrg(bridge: TestBridge, orgId: string): Promise<any> {
  const res = await bridge.http('DELETE', `/admin/v1/organizations/${orgId}`, { schema: 'OrganizationDeleted' });
  expect(res.status, `delete ${orgId}`).to.equal(200);
  return res.body;
}

/** One `error` with the code (no event_id), then the code's close: how the bridge ends a connection. */
async function expectClosedWith(
  client: TestClient<any>,
  code: 'TOKEN_REVOKED' | 'UNAUTHORIZED',
  when: string,
): Promise<void> {
  const error = await client.expect('error', 1000);
  expect(error, when).to.deep.equal({ type: 'error', code, error: error.error });
  expect(await client.waitForClose(1000), when).to.deep.equal({ code: CLOSE_CODES[code], reason: code });
}

/** What the admin API shows of an organization: its record, apps and agents. */
async function snapshot(bridge: TestBridge, orgId: string) {
  const orgs = await bridge.http('GET', '/admin/v1/organizations', { schema: 'OrganizationList' });
  const apps = await bridge.http('GET', `/admin/v1/organizations/${orgId}/apps`, { schema: 'AppList' });
  const agents = await bridge.http('GET', `/admin/v1/organizations/${orgId}/agents`, { schema: 'AgentList' });
  return { org: orgs.body.organizations.find((o: any) => o.org_id === orgId), apps: apps.body, agents: agents.body };
}

describe('deleting an organization', function () {
  it("closes its apps' and agents' live connections with TOKEN_REVOKED and ends an agent's event in flight with AGENT_OFFLINE; another organization goes on", async function () {
    const bridge = await startTestBridge();
    const { org, app, agent, appClient, agentClient } = await bridge.pair();
    const secondInstance = await bridge.connectApp(app.token);
    await bridge.agent(org.org_id, 'Idle Agent'); // never connected
    const retired = await bridge.app(org.org_id, 'Retired App');
    expect(
      (await bridge.http('POST', `/admin/v1/apps/${retired.app_id}/deactivate`, { schema: 'App' })).status,
    ).to.equal(200);

    const other = await bridge.pair();
    const before = await snapshot(bridge, other.org.org_id);
    await secondInstance.expectNothingBeforePong();

    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id, 't', { q: 1 });
    agentClient.send({ type: 'token', event_id, token: 'Partly ' });
    await appClient.expect('token');

    const body = await deleteOrg(bridge, org.org_id);
    expect(body).to.deep.equal({ org_id: org.org_id, apps: 2, agents: 2 }); // the deactivated app and the idle agent count

    // The event in flight ends first, while the app's connection can still carry it; then the app is closed.
    const ended = await appClient.expect('error', 1000);
    expect(ended).to.deep.equal({
      type: 'error',
      event_id,
      agent_id: agent.agent_id,
      code: 'AGENT_OFFLINE',
      error: ended.error,
    });
    expect(ended.error).to.be.a('string').that.is.not.empty;
    await expectClosedWith(appClient, 'TOKEN_REVOKED', 'the app');
    await expectClosedWith(secondInstance, 'TOKEN_REVOKED', "the app's second instance");
    await expectClosedWith(agentClient, 'TOKEN_REVOKED', 'the agent');
    expect(bridge.bridge.stats()).to.deep.equal({ apps: 1, agents: 1, eventsInFlight: 0 }); // the other organization's

    // The other organization is untouched: same records, its clients still connected and served.
    await other.appClient.expectNothingBeforePong();
    await other.agentClient.expectNothingBeforePong();
    await exchange(other.appClient, other.agentClient, other.agent.agent_id);
    other.appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    expect(await other.appClient.expect('error')).to.include({ agent_id: agent.agent_id, code: 'AGENT_NOT_FOUND' });
    expect(await snapshot(bridge, other.org.org_id)).to.deep.equal(before);
  });

  it('leaves no record behind: its tokens get UNAUTHORIZED, and it, its apps and its agents are NOT_FOUND on every admin route', async function () {
    const bridge = await startTestBridge();
    const { org, app, agent, appClient, agentClient } = await bridge.pair();
    const { event_id: eventId } = await exchange(appClient, agentClient, agent.agent_id, 'lesson-1');
    expect(
      (
        await bridge.http('PUT', `/admin/v1/agents/${agent.agent_id}/allowlist`, {
          body: { app_ids: [app.app_id] },
          schema: 'Agent',
        })
      ).status,
    ).to.equal(200);
    const rotated = await bridge.http('POST', `/admin/v1/apps/${app.app_id}/rotate-token`, {
      schema: 'AppTokenRotated',
    });
    const other = await bridge.pair();
    const { event_id: otherEvent } = await exchange(other.appClient, other.agentClient, other.agent.agent_id);

    await deleteOrg(bridge, org.org_id);
    await expectClosedWith(appClient, 'TOKEN_REVOKED', 'the app');
    await expectClosedWith(agentClient, 'TOKEN_REVOKED', 'the agent');

    // No record is left to say "revoked": every token of it is simply unknown now, the rotated-out one included.
    for (const [kind, token] of [
      ['app', app.token],
      ['app', rotated.body.token],
      ['agent', agent.token],
    ] as const) {
      const client = kind === 'app' ? await bridge.connectApp(token) : await bridge.connectAgent(token);
      await expectClosedWith(client, 'UNAUTHORIZED', `a new ${kind} connection after the delete`);
      const directory = await bridge.http('GET', `/v1/organizations/${org.org_id}/agents`, { token });
      expect(directory.status).to.equal(401);
      expect(directory.body.code).to.equal('UNAUTHORIZED');
    }

    const orgs = await bridge.http('GET', '/admin/v1/organizations', { schema: 'OrganizationList' });
    expect(orgs.body.organizations.map((o: any) => o.org_id)).to.deep.equal([other.org.org_id]);
    for (const [method, path, body] of [
      ['GET', `/admin/v1/organizations/${org.org_id}/apps`],
      ['GET', `/admin/v1/organizations/${org.org_id}/agents`],
      ['POST', `/admin/v1/organizations/${org.org_id}/apps`, { name: 'Late App' }],
      ['POST', `/admin/v1/organizations/${org.org_id}/agents`, { name: 'Late Agent' }],
      ['PUT', `/admin/v1/agents/${agent.agent_id}/allowlist`, { app_ids: null }],
      ['POST', `/admin/v1/apps/${app.app_id}/rotate-token`],
      ['POST', `/admin/v1/agents/${agent.agent_id}/rotate-token`],
      ['POST', `/admin/v1/apps/${app.app_id}/deactivate`],
      ['POST', `/admin/v1/agents/${agent.agent_id}/deactivate`],
      ['DELETE', `/admin/v1/organizations/${org.org_id}`], // a second delete
    ] as const) {
      const res = await bridge.http(method, path, { body });
      expect(res.status, `${method} ${path}`).to.equal(404);
      expect(res.body.code, `${method} ${path}`).to.equal('NOT_FOUND');
    }

    // Its sessions are gone; the event log keeps its rows (ids only) until retention.
    const sessions = await bridge.http('GET', '/admin/v1/sessions', { schema: 'SessionList' });
    expect(sessions.body.sessions.map((s: any) => s.agent_id)).to.deep.equal([other.agent.agent_id]);
    const events = await bridge.http('GET', '/admin/v1/events', { schema: 'EventLog' });
    expect(events.body.events.map((e: any) => e.event_id)).to.have.members([eventId, otherEvent]);
  });

  it('answers 404 NOT_FOUND for an unknown or malformed organization, and 401 without the admin token, deleting nothing', async function () {
    const bridge = await startTestBridge();
    const { org, appClient, agentClient } = await bridge.pair();
    for (const id of ['no-such-org', 'Not_An_Id']) {
      const res = await bridge.http('DELETE', `/admin/v1/organizations/${id}`);
      expect(res.status, id).to.equal(404);
      expect(res.body.code, id).to.equal('NOT_FOUND');
      expect(res.body.error, id).to.include(id);
    }
    for (const token of [null, `${ADMIN_TOKEN}x`]) {
      const res = await bridge.http('DELETE', `/admin/v1/organizations/${org.org_id}`, { token });
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('UNAUTHORIZED');
    }
    const orgs = await bridge.http('GET', '/admin/v1/organizations', { schema: 'OrganizationList' });
    expect(orgs.body.organizations.map((o: any) => o.org_id)).to.deep.equal([org.org_id]);
    await appClient.expectNothingBeforePong();
    await agentClient.expectNothingBeforePong();
  });

  describeEachDatabase('while other changes race it', function (db) {
    it('answers a change racing the deletion 404 NOT_FOUND or as if it came first, never 500, and leaves no row of the organization behind', async function () {
      this.timeout(60_000);
      const bridge = await startTestBridge({ databaseUrl: db.url() });
      const statuses: Record<string, number[]> = {};
      const seen = (what: string, res: { status: number; body: any }) => {
        (statuses[what] ??= []).push(res.status);
        if (res.status >= 300) expect(res.body, what).to.deep.include({ code: 'NOT_FOUND' });
      };
      for (let round = 0; round < 15; round++) {
        const org = await bridge.org(`Racing ${round}`);
        const app = await bridge.app(org.org_id, 'Existing App');
        const agent = await bridge.agent(org.org_id, 'Existing Agent');
        const changes: [string, () => ReturnType<TestBridge['http']>][] = [
          [
            'create app',
            () => bridge.http('POST', `/admin/v1/organizations/${org.org_id}/apps`, { body: { name: 'New App' } }),
          ],
          [
            'create agent',
            () => bridge.http('POST', `/admin/v1/organizations/${org.org_id}/agents`, { body: { name: 'New Agent' } }),
          ],
          [
            'allowlist',
            () =>
              bridge.http('PUT', `/admin/v1/agents/${agent.agent_id}/allowlist`, { body: { app_ids: [app.app_id] } }),
          ],
          ['rotate', () => bridge.http('POST', `/admin/v1/apps/${app.app_id}/rotate-token`)],
          [
            'rename',
            () => bridge.http('PATCH', `/admin/v1/organizations/${org.org_id}`, { body: { name: 'Renamed' } }),
          ],
          ['deactivate', () => bridge.http('POST', `/admin/v1/agents/${agent.agent_id}/deactivate`)],
        ];
        // All in flight at once, the deletion sent first, last or in between: each change is sent before it in some
        // rounds and after it in others.
        const k = round % (changes.length + 1);
        const early = changes.slice(0, k).map(([what, send]) => [what, send()] as const);
        const deletion = bridge.http('DELETE', `/admin/v1/organizations/${org.org_id}`);
        const late = changes.slice(k).map(([what, send]) => [what, send()] as const);
        for (const [what, answer] of [...early, ...late]) seen(what, await answer);
        expect((await deletion).status, 'the delete').to.equal(200);
        expect((await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/apps`)).status).to.equal(404);
      }
      const knex = await db.open();
      expect(await knex('organizations').select('name'), 'every organization deleted').to.deep.equal([]);
      for (const table of ['apps', 'agents', 'agent_allowlist', 'tokens'])
        expect(await knex(table).select(), table).to.deep.equal([]);
      expect(
        [...bridge.directory.apps.values(), ...bridge.directory.agents.values()],
        'nothing left in memory',
      ).to.deep.equal([]);
      expect(
        Object.values(statuses)
          .flat()
          .filter((s) => s >= 500),
        JSON.stringify(statuses),
      ).to.deep.equal([]);
    });
  });

  describeEachDatabase('across a restart', function (db) {
    /** Every row of every registry table, and of sessions and events, straight from the database. */
    const TABLES = ['organizations', 'apps', 'agents', 'agent_allowlist', 'tokens', 'sessions', 'events'] as const;
    async function tables(): Promise<Record<(typeof TABLES)[number], any[]>> {
      const knex = await db.open();
      const out = {} as Record<(typeof TABLES)[number], any[]>;
      for (const t of TABLES) out[t] = await knex(t).select();
      return out;
    }

    it("removes its rows from the database in one go, keeps the other organization's and the event log, and stays deleted after a restart", async function () {
      const databaseUrl = db.url();
      // The widest group-commit window, so the session opened just before the delete is still queued then.
      const first = await startTestBridge({ databaseUrl, eventLogFlushMs: 100 });
      const gone = await first.pair();
      await first.http('PUT', `/admin/v1/agents/${gone.agent.agent_id}/allowlist`, {
        body: { app_ids: [gone.app.app_id] },
        schema: 'Agent',
      });
      const { event_id: goneEvent } = await exchange(gone.appClient, gone.agentClient, gone.agent.agent_id);
      const rotated = await first.http('POST', `/admin/v1/agents/${gone.agent.agent_id}/rotate-token`, {
        schema: 'AgentTokenRotated',
      });
      const kept = await first.pair();
      await first.http('PUT', `/admin/v1/agents/${kept.agent.agent_id}/allowlist`, {
        body: { app_ids: [kept.app.app_id] },
        schema: 'Agent',
      });
      const { event_id: keptEvent } = await exchange(kept.appClient, kept.agentClient, kept.agent.agent_id);
      const keptView = await snapshot(first, kept.org.org_id);
      await first.writer.flush();
      const before = await tables();
      expect(before.tokens).to.have.length(5); // two apps, two agents, one rotated-out agent token

      const { event_id: lateEvent } = await exchange(gone.appClient, gone.agentClient, gone.agent.agent_id, 'late');
      expect(first.writer.pending).to.be.greaterThan(0); // its session and event rows are not written yet
      await deleteOrg(first, gone.org.org_id);
      await first.close();

      const after = await tables();
      expect(after.organizations.map((r) => r.org_id)).to.deep.equal([kept.org.org_id]);
      expect(after.apps.map((r) => r.app_id)).to.deep.equal([kept.app.app_id]);
      expect(after.agents.map((r) => r.agent_id)).to.deep.equal([kept.agent.agent_id]);
      expect(after.agent_allowlist).to.deep.equal([{ agent_id: kept.agent.agent_id, app_id: kept.app.app_id }]);
      expect(after.tokens.map((r) => r.owner_id)).to.have.members([kept.app.app_id, kept.agent.agent_id]);
      expect(after.sessions.map((r) => r.agent_id)).to.deep.equal([kept.agent.agent_id]);
      expect(after.events.map((r) => r.event_id)).to.have.members([goneEvent, lateEvent, keptEvent]);

      const second = await startTestBridge({ databaseUrl });
      const agentClient = await second.connectAgent(kept.agent.token);
      const appClient = await second.connectApp(kept.app.token);
      await exchange(appClient, agentClient, kept.agent.agent_id, 'after-restart');
      expect(await snapshot(second, kept.org.org_id)).to.deep.equal(keptView); // both online again, as before
      const missing = await second.http('GET', `/admin/v1/organizations/${gone.org.org_id}/apps`);
      expect(missing.status).to.equal(404);
      expect(missing.body.code).to.equal('NOT_FOUND');
      for (const token of [gone.agent.token, rotated.body.token])
        await expectClosedWith(
          await second.connectAgent(token),
          'UNAUTHORIZED',
          "a deleted agent's token after the restart",
        );
      await expectClosedWith(
        await second.connectApp(gone.app.token),
        'UNAUTHORIZED',
        "a deleted app's token after the restart",
      );
    });
  });
});
