// The two documentation pages in Chromium (issue 33): each renders under the docs' Content-Security-Policy without
// one error, asks nothing of any host but the bridge, and links the other.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { startTestBridge, stopAll, type TestBridge } from '../helpers/bridge.js';
import { launchChromium, screenshot } from '../dashboard/browser.js';

/** A fresh page that records script errors, CSP violations, failed files and every request leaving the bridge. */
async function openPage(browser: Browser, bridge: TestBridge) {
  const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  const elsewhere: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('response', (res) => {
    // The dashboard's sign-in view asks whether it is signed in; 401 is its answer, not a failure.
    if (res.status() >= 400 && !res.url().endsWith('/dashboard/session')) errors.push(`${res.status()} ${res.url()}`);
  });
  page.on('console', (msg) => msg.type() === 'error' && !/status of 401/.test(msg.text()) && errors.push(msg.text()));
  page.on('request', (req) => {
    const url = new URL(req.url());
    if (!['data:', 'blob:'].includes(url.protocol) && url.origin !== bridge.url) elsewhere.push(req.url());
  });
  return { context, page, errors, elsewhere };
}

const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: false });

describe('the documentation pages in a browser', function () {
  this.timeout(90_000);
  let browser: Browser;
  before(async function () {
    browser = await launchChromium();
  });
  after(async function () {
    await browser?.close();
    await stopAll();
  });

  it('renders the HTTP API with Redoc (linked from the dashboard), operations and all, from the bridge alone, and goes back to the protocol', async function () {
    const bridge = await startTestBridge();
    const { context, page, errors, elsewhere } = await openPage(browser, bridge);
    // From the dashboard's sign-in view, which links both pages.
    await page.goto(`${bridge.url}/dashboard`);
    await page.getByRole('link', { name: 'The HTTP API' }).click();
    await page.waitForURL(`${bridge.url}/docs/http/`);
    await heading(page, 'Agent Messaging Bridge — HTTP API').waitFor();
    // An operation of the admin API: its section, titled with its summary.
    const operation = page.locator('[id="operation/disconnectConnection"]');
    await operation.waitFor({ state: 'attached' });
    await operation.getByRole('heading', { name: 'Disconnect a connection' }).waitFor();
    await screenshot(page, 'docs-http', false);
    const nav = page.getByRole('navigation', { name: 'Agent Messaging Bridge documentation' });
    expect(await nav.getByRole('link', { name: 'HTTP API' }).getAttribute('aria-current')).to.equal('page');
    await nav.getByRole('link', { name: 'WebSocket protocol' }).click();
    await page.waitForURL(`${bridge.url}/docs/`);
    await page.locator('#introduction').getByText('Agent Messaging Bridge', { exact: false }).first().waitFor();
    await page.locator('[id="message-Error"]').first().waitFor({ state: 'attached' });
    await screenshot(page, 'docs-protocol', false);
    expect(await nav.getByRole('link', { name: 'WebSocket protocol' }).getAttribute('aria-current')).to.equal('page');
    await nav.getByRole('link', { name: 'HTTP API' }).click();
    await page.waitForURL(`${bridge.url}/docs/http/`);
    await heading(page, 'Agent Messaging Bridge — HTTP API').waitFor();
    expect(errors).to.deep.equal([]);
    expect(elsewhere, 'requests to any host but the bridge').to.deep.equal([]);
    await context.close();
  });
});
