// Debian's Chromium driven by playwright-core (no browser download), and what every browser test of the dashboard
// does: open it on a real bridge, sign in, keep screenshots, and read what a locator shows.
import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { ADMIN_TOKEN, type TestBridge } from '../helpers/bridge.js';

/** CHROMIUM_PATH, else where Debian, Ubuntu, Fedora and Homebrew put Chromium or Chrome. */
const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];
export const SCREENSHOTS = new URL('../../test-output/screenshots/', import.meta.url);

function findChromium(): string {
  const given = process.env.CHROMIUM_PATH;
  if (given) {
    if (!existsSync(given)) throw new Error(`CHROMIUM_PATH=${given}: no such file.`);
    return given;
  }
  const found = CANDIDATES.find((path) => existsSync(path));
  if (!found)
    throw new Error(
      `No Chromium found (looked at ${CANDIDATES.join(', ')}): the dashboard's browser tests need one; set CHROMIUM_PATH, or apt-get install chromium (.ci/run installs it).`,
    );
  return found;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: findChromium(),
    headless: true,
    // This machine has no network: without these, Chromium keeps trying to reach Google's hosts.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A fresh browser profile on the bridge's dashboard, allowed to use the clipboard. `errors` collects script errors,
 * CSP violations and files that failed to load (not the API's 4xx answers, which the page shows).
 */
export async function openDashboard(
  browser: Browser,
  bridge: TestBridge,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: bridge.url });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/status of 4\d\d/.test(msg.text())) errors.push(msg.text());
  });
  page.on('response', (res) => {
    if (
      !new URL(res.url()).pathname.startsWith('/admin/') &&
      res.status() >= 400 &&
      !res.url().endsWith('/dashboard/session')
    )
      errors.push(`${res.status()} ${res.url()}`);
  });
  await page.goto(`${bridge.url}/dashboard`);
  return { context, page, errors };
}

/**
 * The set-up of a describe block of browser tests, called inside it: one Chromium for the block, and `open` gives
 * each test a fresh profile on the dashboard (openDashboard), closed after the test.
 */
export function browserSuite(): { open(bridge: TestBridge): ReturnType<typeof openDashboard> } {
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  before(async function () {
    browser = await launchChromium();
  });
  after(async function () {
    await browser?.close();
  });
  afterEach(async function () {
    for (const context of contexts.splice(0)) await context.close();
  });
  return {
    async open(bridge) {
      const opened = await openDashboard(browser!, bridge);
      contexts.push(opened.context);
      return opened;
    },
  };
}

/** Signs in and waits for the landing view, the overview. */
export async function signIn(page: Page): Promise<void> {
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}

/** Follows the main navigation's link to a view and waits for its heading. */
export async function goTo(page: Page, view: 'Overview' | 'Organizations' | 'Event log'): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name: view }).click();
  await page.getByRole('heading', { level: 1, name: view }).waitFor();
}

/** The whole page, or only the window (a modal dialog's backdrop covers only the window). */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname, fullPage });
}

/** The table row that names this app or agent. */
export function row(page: Page, name: string): Locator {
  return page.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: false }) });
}

/** Waits until the row's status badge reads `status` (the page polls every 3 s). */
export async function untilStatus(
  page: Page,
  name: string,
  status: 'online' | 'offline' | 'deactivated',
): Promise<void> {
  await row(page, name)
    .locator('.badge', { hasText: new RegExp(`^${status}$`) })
    .waitFor({ timeout: 15_000 });
}

/** Everything the page holds: its DOM text, form values included, and the address. */
export async function pageHolds(page: Page, text: string): Promise<boolean> {
  const values = (await page.evaluate(
    '[...document.querySelectorAll("input, textarea")].map((e) => e.value).join(" ")',
  )) as string;
  return (await page.content()).includes(text) || values.includes(text) || page.url().includes(text);
}
