// An organization's live picture on its page (D8) in Chromium: an app's instances counted as they connect, an
// agent's connection (since, last ping) and its last minute (events per second, error rate), and the link to its
// recent events. The page's timers run on Playwright's clock, so the 3 s between reads take no real time.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { startTestBridge } from '../helpers/bridge.js';
import { browserSuite, goTo, screenshot, signIn } from './browser.js';

const POLL_MS = 3000;

/** The row of the live table `caption` that names `name`. */
function liveRow(page: Page, caption: RegExp, name: string) {
  return page
    .getByRole('table', { name: caption })
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name, exact: true }) });
}

describe('dashboard organization live', function () {
  this.timeout(90_000);
  const { open } = browserSuite();

  it("counts an app's instances 0 to 2, shows an agent's connection, last ping, events per second and error rate, and links to its events", async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org('Acme School');
    const app = await bridge.app(org.org_id, 'Classroom');
    const agent = await bridge.agent(org.org_id, 'Maths Tutor');
    const { page, errors } = await open(bridge);
    await page.clock.install();
    await signIn(page);
    await goTo(page, 'Organizations');
    await page.getByRole('link', { name: 'Acme School' }).click();

    const instances = liveRow(page, /^Apps: live instances/, 'Classroom')
      .getByRole('cell')
      .first();
    await instances.getByText('0', { exact: true }).waitFor();
    const tutor = liveRow(page, /^Agents: live connection/, 'Maths Tutor');
    await tutor.getByText('not connected').waitFor();

    // An event to the agent while it is away: one of its last minute's events, and an error.
    const first = await bridge.connectApp(app.token);
    first.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'lesson-1', payload: { text: 'Hello' } });
    expect(await first.expect('error')).to.include({ code: 'AGENT_OFFLINE' });
    const second = await bridge.connectApp(app.token);
    const agentClient = await bridge.connectAgent(agent.token);
    first.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'lesson-1', payload: { text: 'Hello' } });
    const { event_id } = await first.expect('accepted');
    await agentClient.expect('event');
    agentClient.send({ type: 'reply', event_id, content: 'Hi.', done: true });
    await first.expect('reply');
    bridge.clock.advance(10_000);
    await agentClient.expectNothingBeforePong(); // its last ping, 10 s after it connected
    await second.expectNothingBeforePong();

    await page.clock.runFor(POLL_MS);
    await instances.getByText('2', { exact: true }).waitFor();
    const connections = liveRow(page, /^Apps: live instances/, 'Classroom').getByRole('listitem');
    expect(await connections.count()).to.equal(2);
    expect(await connections.nth(1).locator('.connection').textContent()).to.match(
      /^since 2026-11-22 12:00:00 UTC, last ping 2026-11-22 12:00:10 UTC, node \S+$/,
    );
    const cells = await tutor.getByRole('cell').allTextContents();
    expect(cells[0]).to.match(
      /^connected since 2026-11-22 12:00:00 UTC, last ping 2026-11-22 12:00:10 UTC, node \S+ Disconnect…$/,
    );
    expect(cells.slice(1, 3)).to.deep.equal([(2 / 60).toFixed(2), '50% (1 of 2)']);
    await screenshot(page, 'organization-live');

    second.close();
    await second.waitForClose();
    await page.clock.runFor(POLL_MS);
    await instances.getByText('1', { exact: true }).waitFor();

    await tutor.getByRole('link', { name: 'Recent events of Maths Tutor' }).click();
    await page.getByRole('heading', { level: 1, name: 'Event log' }).waitFor();
    expect(await page.getByLabel('Agent ID').inputValue()).to.equal(agent.agent_id);
    await page.getByRole('row').filter({ hasText: 'AGENT_OFFLINE' }).waitFor();
    expect(errors).to.deep.equal([]);
  });

  it('disconnects one connection after a confirmation (H8): its client gets DISCONNECTED_BY_ADMIN, the other stays, the audit trail says who', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org('Acme School');
    const app = await bridge.app(org.org_id, 'Classroom');
    const first = await bridge.connectApp(app.token);
    bridge.clock.advance(1_000);
    const second = await bridge.connectApp(app.token);
    await second.expectNothingBeforePong();
    const { page, errors } = await open(bridge);
    await page.clock.install();
    await signIn(page);
    await goTo(page, 'Organizations');
    await page.getByRole('link', { name: 'Acme School' }).click();
    const row = liveRow(page, /^Apps: live instances/, 'Classroom');
    await row.getByRole('cell').first().getByText('2', { exact: true }).waitFor();
    const buttons = row.getByRole('button', { name: /^Disconnect this connection of Classroom/ });
    expect(await buttons.count()).to.equal(2);
    const label = (await buttons.first().getAttribute('aria-label'))!;
    const connectionId = /\((c-[0-9a-z]{16})\)$/.exec(label)![1]!;

    // Cancelled: nothing happens.
    await buttons.first().click();
    const dialog = page.getByRole('dialog', { name: 'Disconnect this connection of Classroom?' });
    await dialog.getByText(connectionId).waitFor();
    await screenshot(page, 'disconnect-connection', false);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await first.expectNothingBeforePong();

    await buttons.first().click();
    await dialog.getByRole('button', { name: 'Disconnect' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page
      .getByRole('status')
      .getByText('A connection of Classroom was closed; its client may reconnect.')
      .waitFor();
    expect(await first.expect('error', 1000)).to.include({ code: 'DISCONNECTED_BY_ADMIN' });
    expect(await first.waitForClose(1000)).to.deep.equal({ code: 4205, reason: 'DISCONNECTED_BY_ADMIN' });
    await second.expectNothingBeforePong();
    await row.getByRole('cell').first().getByText('1', { exact: true }).waitFor();
    expect(await row.getByRole('button', { name: new RegExp(connectionId) }).count()).to.equal(0);

    const audit = await bridge.http('GET', '/admin/v1/audit?limit=1', { schema: 'AuditLog' });
    expect(audit.body.entries[0]).to.deep.include({ action: 'connection.disconnect', target: connectionId });
    expect(audit.body.entries[0].actor.kind).to.equal('dashboard_session');
    expect(errors).to.deep.equal([]);
  });
});
