// The dashboard on a phone (D11): at 390 px wide no page scrolls sideways, tables become one card per row with
// Status and Actions in view, and the nav wraps. Screenshots of every page at 1366 and at 390 px.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { browserSuite, screenshot, signIn } from './browser.js';

const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1366, height: 800 };

/** Whether the page is wider than the window (the test's definition of scrolling sideways). */
const overflow = (page: Page) =>
  page.evaluate(
    '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
  ) as Promise<{ scroll: number; client: number }>;

/** The elements that stick out of the window on the right, to say what is too wide when the check fails. */
const tooWide = (page: Page) =>
  page.evaluate(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
    .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' ' + Math.round(e.getBoundingClientRect().right) + ': ' + (e.textContent || '').slice(0, 40))`) as Promise<
    string[]
  >;

async function fitsAndShoot(page: Page, name: string): Promise<void> {
  await page.setViewportSize(LAPTOP);
  await screenshot(page, `${name}-1366`);
  await page.setViewportSize(PHONE);
  const { scroll, client } = await overflow(page);
  expect(scroll, `${name}: no sideways scroll at 390 px (${(await tooWide(page)).join(' | ')})`).to.be.at.most(client);
  await screenshot(page, `${name}-390`);
}

/** The rectangle of a locator's element is inside the window's width. */
async function inView(page: Page, locator: ReturnType<Page['locator']>, what: string): Promise<void> {
  const box = await locator.boundingBox();
  expect(box, what).not.to.equal(null);
  expect(box!.x, what).to.be.at.least(0);
  expect(box!.x + box!.width, what).to.be.at.most(PHONE.width);
}

/** A long-lived set-up: an organization with apps and agents, one of them online, sessions and events. */
async function populated(bridge: TestBridge) {
  const org = await bridge.org('Acme Learning Europe — the long name of a school network');
  const app = await bridge.app(org.org_id, 'Classroom App (iOS)');
  await bridge.app(org.org_id, 'Library');
  const agent = await bridge.agent(org.org_id, 'Maths Tutor', {
    description: 'Explains maths and physics exercises step by step, with worked examples.',
  });
  await bridge.agent(org.org_id, 'A tutor with a very long name that keeps going and going');
  const agentClient = await bridge.connectAgent(agent.token);
  const appClient = await bridge.connectApp(app.token);
  for (const thread of ['lesson-1', 'a-thread-id-that-is-rather-long-for-a-phone-screen']) {
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: thread, payload: { text: 'hi' } });
    const { event_id } = await appClient.expect('accepted');
    await agentClient.expect('event');
    agentClient.send({ type: 'reply', event_id, content: 'hello', done: true });
    await appClient.expect('reply');
  }
  appClient.send({ type: 'event', agent_id: 'nobody-here', thread_id: 'lesson-1', payload: { text: 'hi' } });
  await appClient.expect('error');
  return { org, app, agent };
}

describe('dashboard on a small screen', function () {
  this.timeout(90_000);
  const { open } = browserSuite();

  it('fits every page in 390 px: sign-in, organizations, an organization, events, sessions, audit', async function () {
    const bridge = await startTestBridge();
    const { org, agent } = await populated(bridge);
    const { page, errors } = await open(bridge);

    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await fitsAndShoot(page, 'small-sign-in');
    await page.setViewportSize(LAPTOP);
    await signIn(page);

    await page.goto(`${bridge.url}/dashboard#/orgs`);
    await page.getByRole('heading', { level: 1, name: 'Organizations' }).waitFor();
    await page.getByRole('link', { name: org.name }).waitFor();
    await fitsAndShoot(page, 'small-organizations');
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const name of ['Organizations', 'Event log', 'Audit'])
      await inView(page, nav.getByRole('link', { name, exact: true }), `the nav link ${name}`);
    await inView(page, nav.getByRole('button', { name: 'Sign out' }), 'Sign out');

    await page.setViewportSize(LAPTOP);
    await page.getByRole('link', { name: org.name }).click();
    await page.getByRole('heading', { level: 1, name: org.name }).waitFor();
    await page.locator('tr', { hasText: 'Maths Tutor' }).locator('.badge', { hasText: 'online' }).waitFor();
    await fitsAndShoot(page, 'small-organization');
    const tutor = page.locator('tbody tr', { hasText: 'Maths Tutor' });
    await inView(page, tutor.locator('.badge'), 'the status of an agent');
    await inView(page, tutor.getByRole('button', { name: 'Deactivate Maths Tutor' }), 'the actions of an agent');
    expect(
      await tutor
        .locator('td', { has: page.locator('.badge') })
        .evaluate((td: any) => td.ownerDocument.defaultView.getComputedStyle(td, '::before').content),
    ).to.equal('"Status"');

    // A token shown once, and the dialogs, on the phone.
    await page.getByLabel('App name').fill('Phone App');
    await page.getByRole('button', { name: 'Register app' }).click();
    await page.getByRole('region', { name: 'App token of “Phone App”: shown once' }).waitFor();
    await fitsAndShoot(page, 'small-token-panel');
    await page.getByRole('button', { name: /I have stored it/ }).click();
    await page.getByRole('button', { name: 'Delete organization…' }).click();
    const dialog = page.getByRole('dialog', { name: `Delete ${org.name}?` });
    await dialog.getByText('2 of them are online now').waitFor();
    await inView(page, dialog.getByRole('button', { name: 'Delete organization' }), "the dialog's button");
    expect((await overflow(page)).scroll).to.be.at.most(PHONE.width);
    await screenshot(page, 'small-delete-organization-390', false);
    await page.keyboard.press('Escape');
    await tutor.getByRole('button', { name: 'Edit Maths Tutor' }).click();
    await inView(
      page,
      page.getByRole('dialog', { name: 'Edit Maths Tutor' }).getByLabel('Session TTL (days)'),
      'the TTL field',
    );
    await screenshot(page, 'small-edit-agent-390', false);
    await page.keyboard.press('Escape');

    await page.setViewportSize(LAPTOP);
    await page.goto(`${bridge.url}/dashboard#/orgs/${org.org_id}/agents/${agent.agent_id}/sessions`);
    await page.getByRole('row').filter({ hasText: 'lesson-1' }).waitFor();
    await fitsAndShoot(page, 'small-sessions');

    await page.setViewportSize(LAPTOP);
    await page.getByRole('navigation').getByRole('link', { name: 'Event log' }).click();
    await page.getByRole('row').filter({ hasText: 'AGENT_NOT_FOUND' }).waitFor();
    await fitsAndShoot(page, 'small-events');
    const received = page.locator('tbody th time').first();
    const lines = await received.evaluate((el: any) =>
      Math.round(
        el.getBoundingClientRect().height / parseFloat(el.ownerDocument.defaultView.getComputedStyle(el).lineHeight),
      ),
    );
    expect(lines, "an event's time on one line").to.equal(1);

    await page.setViewportSize(LAPTOP);
    await page.getByRole('navigation').getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('row').filter({ hasText: 'app.create' }).first().waitFor();
    await fitsAndShoot(page, 'small-audit');
    expect(errors).to.deep.equal([]);
  });
});
