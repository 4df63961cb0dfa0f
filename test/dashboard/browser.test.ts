// The dashboard end to end (issue 8): headless Debian Chromium driven by playwright-core against a real bridge,
// the way an operator uses it, keyboard included. Screenshots of the main pages go to test-output/screenshots/.
import { eventually } from '../helpers/eventually.js';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN, startTestBridge } from '../helpers/bridge.js';
import type { AgentClient, AppClient } from '../helpers/ws-client.js';
import { browserSuite, goTo, pageHolds, row, screenshot, signIn, untilStatus } from './browser.js';
import { send } from './cookie-http.js';

const PAYLOAD = { text: 'a secret question' };
const PAYLOAD_SIZE = `${Buffer.byteLength(JSON.stringify(PAYLOAD))} B`;

/** The app sends one event, the agent answers it with two fragments: a delivered, replied event and a session. */
async function deliverOne(
  appClient: AppClient,
  agentClient: AgentClient,
  agentId: string,
  threadId: string,
): Promise<void> {
  appClient.send({ type: 'event', agent_id: agentId, thread_id: threadId, payload: PAYLOAD });
  const { event_id } = await appClient.expect('accepted');
  await agentClient.expect('event');
  agentClient.send({ type: 'token', event_id, token: 'Two ' });
  agentClient.send({ type: 'token', event_id, token: 'divisors.' });
  agentClient.send({ type: 'reply', event_id, content: '', done: true });
  await appClient.expect('token');
  await appClient.expect('token');
  await appClient.expect('reply');
}

const isFocused = (locator: ReturnType<Page['getByLabel']>) =>
  locator.evaluate((el: any) => el.ownerDocument.activeElement === el);

describe('dashboard in a browser', function () {
  this.timeout(90_000);
  const { open } = browserSuite();

  it('signs in with the keyboard alone, keeps the admin token and the session out of storage, scripts and the address, and signs out', async function () {
    const bridge = await startTestBridge();
    const { context, page, errors } = await open(bridge);
    const writes: string[] = [];
    page.on('request', (r) => r.method() !== 'GET' && writes.push(`${r.method()} ${new URL(r.url()).pathname}`));
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await screenshot(page, 'sign-in');

    const tokenField = page.getByLabel('Admin token');
    for (let i = 0; i < 10 && !(await isFocused(tokenField)); i++) await page.keyboard.press('Tab');
    expect(await isFocused(tokenField), 'Tab reaches the token field').to.equal(true);
    const ring = await tokenField.evaluate((el: any) => el.ownerDocument.defaultView.getComputedStyle(el).outlineStyle);
    expect(ring, 'a visible focus ring').to.equal('solid');

    await page.keyboard.press('Enter');
    await page.locator('.field', { has: tokenField }).getByText('Enter the admin token.').waitFor();
    expect(writes, 'an empty form is not sent').to.deep.equal([]);

    await page.keyboard.type('not-the-admin-token-000');
    await page.keyboard.press('Enter');
    await page
      .locator('.field', { has: tokenField })
      .getByText('That is not the ADMIN_TOKEN this bridge was started with.')
      .waitFor();
    expect(await tokenField.getAttribute('aria-invalid')).to.equal('true');

    await page.keyboard.press('Control+A');
    await page.keyboard.type(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    expect(page.url()).to.match(/#\/overview$/);
    expect(writes).to.deep.equal(['POST /dashboard/session', 'POST /dashboard/session']);

    const cookies = await context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).to.deep.equal([['bridge_session', true, 'Strict']]);
    const { body: session } = await send(bridge, 'GET', '/dashboard/session', {
      cookie: `bridge_session=${cookies[0]!.value}`,
    });
    expect(await page.evaluate('localStorage.length + sessionStorage.length')).to.equal(0);
    expect(await page.evaluate('document.cookie'), 'the cookie is invisible to scripts').to.equal('');
    for (const secret of [ADMIN_TOKEN, cookies[0]!.value, session.csrf_token])
      expect(await pageHolds(page, secret)).to.equal(false);

    await page.getByRole('button', { name: 'Sign out' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await page.getByRole('status').getByText('Signed out.').waitFor();
    expect(
      (await send(bridge, 'GET', '/dashboard/session', { cookie: `bridge_session=${cookies[0]!.value}` })).status,
    ).to.equal(401);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(errors).to.deep.equal([]);
  });

  it('registers an organization, an app and an agent, shows each token once with a copy button, and shows them online when they connect', async function () {
    const bridge = await startTestBridge();
    const { page, errors } = await open(bridge);
    const writes: string[] = [];
    page.on('request', (r) => r.method() !== 'GET' && writes.push(`${r.method()} ${new URL(r.url()).pathname}`));
    await signIn(page);
    await goTo(page, 'Organizations');

    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByText('Enter a name.').waitFor();
    expect(writes, 'the empty form was not sent').to.deep.equal(['POST /dashboard/session']);
    await page.getByLabel('Organization name').fill('Acme School');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { level: 1, name: 'Acme School' }).waitFor();

    await page.getByLabel('App name').fill('Classroom');
    await page.getByRole('button', { name: 'Register app' }).click();
    const appPanel = page.getByRole('region', { name: 'App token of “Classroom”: shown once' });
    const appToken = await appPanel.getByLabel('Token').inputValue();
    expect(appToken).to.match(/^rlk_classroom-[a-z0-9]+_[A-Za-z0-9]{32,}$/);
    await appPanel.getByText('can never show it again').waitFor();
    await appPanel.getByRole('button', { name: 'Copy token' }).click();
    await appPanel.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).to.equal(appToken);
    await screenshot(page, 'token-shown');
    await appPanel.getByRole('button', { name: /I have stored it/ }).click();
    expect(await pageHolds(page, appToken), 'the app token is gone once hidden').to.equal(false);

    await page.getByLabel('Agent name').fill('Maths Tutor');
    await page.getByLabel('Description (optional)').fill('Explains <b>maths</b> step by step.');
    await page.getByLabel('Session TTL (days)').fill('0');
    await page.getByRole('button', { name: 'Register agent' }).click();
    await page.getByText('Enter a whole number of days from 1 to 3650.').waitFor();
    expect(
      writes.filter((w) => w.endsWith('/agents')),
      'the invalid form was not sent',
    ).to.deep.equal([]);
    await page.getByLabel('Session TTL (days)').fill('30');
    await page.getByRole('button', { name: 'Register agent' }).click();
    const agentPanel = page.getByRole('region', { name: 'Agent token of “Maths Tutor”: shown once' });
    await agentPanel.getByRole('button', { name: 'Copy token' }).click();
    await agentPanel.getByText('Copied to the clipboard.').waitFor();
    const agentToken = (await page.evaluate('navigator.clipboard.readText()')) as string;
    expect(agentToken).to.equal(await agentPanel.getByLabel('Token').inputValue());
    expect(agentToken).to.match(/^rla_maths-tutor-[a-z0-9]+_[A-Za-z0-9]{32,}$/);

    const tutor = row(page, 'Maths Tutor');
    await tutor.getByText('30 days').waitFor();
    await tutor.getByText('Every app of the organization').waitFor();
    await tutor.getByText('Explains <b>maths</b> step by step.').waitFor(); // shown as text, never as markup
    await untilStatus(page, 'Maths Tutor', 'offline');

    await page.getByRole('navigation').getByRole('link', { name: 'Organizations' }).click();
    await page.getByRole('link', { name: 'Acme School' }).click();
    await page.getByRole('heading', { level: 1, name: 'Acme School' }).waitFor();
    expect(await pageHolds(page, agentToken), 'the agent token is gone after leaving the page').to.equal(false);

    const agentClient = await bridge.connectAgent(agentToken);
    await untilStatus(page, 'Maths Tutor', 'online');
    const appClient = await bridge.connectApp(appToken);
    await untilStatus(page, 'Classroom', 'online');
    await appClient.expectNothingBeforePong();
    await screenshot(page, 'organization');
    agentClient.close();
    await untilStatus(page, 'Maths Tutor', 'offline');
    expect(errors).to.deep.equal([]);
  });

  it("edits an agent's allowlist, and finds the rejected event in the event log with its filters", async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org('Acme School');
    const classroom = await bridge.app(org.org_id, 'Classroom');
    const library = await bridge.app(org.org_id, 'Library');
    const agent = await bridge.agent(org.org_id, 'Maths Tutor');
    const agentClient = await bridge.connectAgent(agent.token);
    const [classroomClient, libraryClient] = [
      await bridge.connectApp(classroom.token),
      await bridge.connectApp(library.token),
    ];
    const { page, errors } = await open(bridge);
    const eventQueries: string[] = [];
    page.on(
      'request',
      (r) => new URL(r.url()).pathname === '/admin/v1/events' && eventQueries.push(new URL(r.url()).search),
    );
    await signIn(page);
    await goTo(page, 'Organizations');
    await page.getByRole('link', { name: 'Acme School' }).click();

    const allowlist = async () =>
      (await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/agents`)).body.agents[0].allowlist;
    await row(page, 'Maths Tutor').getByRole('button', { name: 'Edit allowlist of Maths Tutor' }).click();
    const dialog = page.getByRole('dialog', { name: 'Allowlist of Maths Tutor' });
    expect(await dialog.getByLabel('Every app of the organization (no allowlist)').isChecked()).to.equal(true);
    await dialog.getByLabel('Only the apps chosen below').check();
    await dialog.getByText('No app chosen: no app will be able to send events to this agent.').waitFor();
    await dialog.getByLabel(/^Classroom/).check();
    await dialog.getByText('1 app chosen; every other app gets PERMISSION_DENIED.').waitFor();
    await screenshot(page, 'allowlist-editor', false);
    await dialog.getByRole('button', { name: 'Save allowlist' }).click();
    await dialog.waitFor({ state: 'detached' });
    await row(page, 'Maths Tutor').getByRole('cell', { name: 'Classroom', exact: true }).waitFor();
    expect(await allowlist()).to.deep.equal([classroom.app_id]);

    libraryClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'shelf-1', payload: PAYLOAD });
    expect(await libraryClient.expect('error')).to.include({ code: 'PERMISSION_DENIED' });
    await deliverOne(classroomClient, agentClient, agent.agent_id, 'lesson-1');

    await page.getByRole('navigation').getByRole('link', { name: 'Event log' }).click();
    await page.getByRole('heading', { level: 1, name: 'Event log' }).waitFor();
    await page.getByRole('row').filter({ hasText: 'PERMISSION_DENIED' }).waitFor();
    expect(await page.getByRole('row').count(), 'a header and two events').to.equal(3);

    await page.getByLabel('App ID').fill('Not An Id');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('An app ID has only a–z, 0–9 and -, at most 64 characters.').waitFor();
    await page.getByLabel('App ID').fill('');
    await page.getByLabel('Status').selectOption('rejected');
    await page.getByLabel('Error code').selectOption('PERMISSION_DENIED');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/#\/events\?status=rejected&code=PERMISSION_DENIED$/);
    const rejected = page.getByRole('row').filter({ hasText: library.app_id });
    await rejected.waitFor();
    // The filtered page may be drawn again (the route, then the live tail's first read): counted once it is still.
    const rows = await eventually(
      'the filtered rows',
      () => page.getByRole('row').count(),
      (n) => n === 2,
      5_000,
    );
    expect(rows, 'a header and the rejected event').to.equal(2);
    const cells = await rejected.getByRole('cell').allTextContents();
    // Event ID, App, Agent, Status, Outcome, Code, Latency, Tokens, Payload (the time is the row header)
    expect(cells.slice(1)).to.deep.equal([
      library.app_id,
      agent.agent_id,
      'rejected',
      'rejected',
      'PERMISSION_DENIED',
      '0 ms',
      '—',
      PAYLOAD_SIZE,
    ]);
    await screenshot(page, 'event-log');

    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Error code').selectOption('');
    await page.getByLabel('App ID').fill(classroom.app_id);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const delivered = page.getByRole('row').filter({ hasText: 'replied' });
    await delivered.waitFor();
    expect((await delivered.getByRole('cell').allTextContents()).slice(3)).to.deep.equal([
      'delivered',
      'replied',
      '—',
      '0 ms',
      '2',
      PAYLOAD_SIZE,
    ]);
    expect(eventQueries.some((q) => q.includes('Not'))).to.equal(false);
    expect(await pageHolds(page, PAYLOAD.text), 'payloads are never shown').to.equal(false);

    await page.getByRole('navigation').getByRole('link', { name: 'Organizations' }).click();
    await page.getByRole('link', { name: 'Acme School' }).click();
    await row(page, 'Maths Tutor').getByRole('button', { name: 'Edit allowlist of Maths Tutor' }).click();
    await dialog.getByLabel('Every app of the organization (no allowlist)').check();
    await dialog.getByRole('button', { name: 'Save allowlist' }).click();
    await row(page, 'Maths Tutor').getByRole('cell', { name: 'Every app of the organization' }).waitFor();
    expect(await allowlist()).to.equal(null);
    expect(errors).to.deep.equal([]);
  });

  it('rotates a token saying until when the old one works, lists sessions with their expiry, and deactivates only after a confirmation', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org('Acme School');
    const app = await bridge.app(org.org_id, 'Classroom');
    const spare = await bridge.app(org.org_id, 'Spare');
    const agent = await bridge.agent(org.org_id, 'Maths Tutor');
    const agentClient = await bridge.connectAgent(agent.token);
    const appClient = await bridge.connectApp(app.token);
    await deliverOne(appClient, agentClient, agent.agent_id, 'lesson-1');
    const { page, errors } = await open(bridge);
    await signIn(page);
    await goTo(page, 'Organizations');
    await page.getByRole('link', { name: 'Acme School' }).click();

    await row(page, 'Classroom').getByRole('button', { name: 'Rotate token of Classroom' }).click();
    const rotateDialog = page.getByRole('dialog', { name: 'Rotate the token of Classroom?' });
    await rotateDialog.getByText('keeps working for one more hour').waitFor();
    await rotateDialog.getByRole('button', { name: 'Rotate token' }).click();
    const panel = page.getByRole('region', { name: 'App token of “Classroom”: shown once' });
    await panel.getByText('The previous token keeps working until 2026-11-22 13:00:00 UTC (one hour)').waitFor();
    const rotated = await panel.getByLabel('Token').inputValue();
    expect(rotated).not.to.equal(app.token);
    await (await bridge.connectApp(rotated)).expectNothingBeforePong();
    await appClient.expectNothingBeforePong(); // the old token's connection stays until the grace ends

    // An API error appears where it was caused: in the dialog, which stays open.
    await row(page, 'Spare').getByRole('button', { name: 'Rotate token of Spare' }).click();
    const spareDialog = page.getByRole('dialog', { name: 'Rotate the token of Spare?' });
    await bridge.http('POST', `/admin/v1/apps/${spare.app_id}/deactivate`, { schema: 'App' });
    await spareDialog.getByRole('button', { name: 'Rotate token' }).click();
    await spareDialog
      .getByRole('alert')
      .getByText(`App ${spare.app_id} is deactivated; its tokens cannot be rotated.`)
      .waitFor();
    await page.keyboard.press('Escape');
    await spareDialog.waitFor({ state: 'detached' });
    await untilStatus(page, 'Spare', 'deactivated');

    await page.getByRole('link', { name: 'Sessions of Maths Tutor' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sessions of Maths Tutor' }).waitFor();
    const session = page.getByRole('row').filter({ hasText: 'lesson-1' });
    expect(await session.getByRole('cell').allTextContents()).to.deep.equal([
      app.app_id,
      `svc:${agent.agent_id}:${app.app_id}:lesson-1`,
      '2026-11-22 12:00:00 UTC',
      '2026-12-06 12:00:00 UTC',
    ]);
    await page.getByText('For Maths Tutor the TTL is 14 days.').waitFor();
    await screenshot(page, 'sessions');

    await page.getByRole('link', { name: org.org_id }).click();
    const deactivateButton = row(page, 'Maths Tutor').getByRole('button', { name: 'Deactivate Maths Tutor' });
    await deactivateButton.click();
    const confirm = page.getByRole('dialog', { name: 'Deactivate Maths Tutor?' });
    await confirm.getByText('This is final:').waitFor();
    expect(
      await confirm
        .getByRole('button', { name: 'Cancel' })
        .evaluate((el: any) => el.ownerDocument.activeElement === el),
      'Cancel has the focus',
    ).to.equal(true);
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    expect(await isFocused(deactivateButton), 'the focus goes back to the button').to.equal(true);
    await agentClient.expectNothingBeforePong();
    await deactivateButton.click();
    await screenshot(page, 'deactivate-confirmation', false);
    await confirm.getByRole('button', { name: 'Deactivate agent' }).click();
    await untilStatus(page, 'Maths Tutor', 'deactivated');
    expect(await agentClient.waitForClose()).to.deep.equal({ code: 4410, reason: 'TOKEN_REVOKED' });
    expect(await row(page, 'Maths Tutor').getByRole('button').count(), 'nothing left to change').to.equal(0);
    expect(errors).to.deep.equal([]);
  });

  it('asks to sign in again when the session has ended, and explains when the admin API is off', async function () {
    const bridge = await startTestBridge();
    const { page, errors } = await open(bridge);
    await signIn(page);
    await goTo(page, 'Organizations');
    await page.getByText('No organization yet').waitFor(); // the page's own read done: only the creation meets the end
    bridge.clock.advance(12 * 3_600_000);
    await page.getByLabel('Organization name').fill('Too Late');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await page
      .getByRole('status')
      .getByText(/Your session has ended/)
      .waitFor();
    expect((await bridge.http('GET', '/admin/v1/organizations')).body.organizations).to.deep.equal([]);

    const off = await startTestBridge({ adminToken: undefined });
    await page.goto(`${off.url}/dashboard`);
    await page.getByRole('heading', { level: 1, name: 'The admin API is off' }).waitFor();
    await page.getByText('ADMIN_TOKEN=change-me-admin-token npm start').waitFor();
    expect(errors).to.deep.equal([]);
  });
});
