// Finding in the dashboard (D11): the organizations list and an organization's apps and agents are searched and
// paged, the page shown is kept in the address across a reload, and the event log filters by organization and
// by a time range.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { browserSuite, screenshot, signIn } from './browser.js';

/** The names in the table's row headers, in order. */
const names = (page: Page, table = page.locator('table')) => table.locator('tbody th').allTextContents();

describe('dashboard: search and paging', function () {
  this.timeout(90_000);
  const { open } = browserSuite();

  async function openAt(bridge: TestBridge, hash: string) {
    const opened = await open(bridge);
    await signIn(opened.page);
    await opened.page.goto(`${bridge.url}/dashboard${hash}`);
    return opened;
  }

  it('finds one organization among 41 and pages through all of them, keeping the page across a reload', async function () {
    const bridge = await startTestBridge();
    const all: string[] = [];
    for (let i = 1; i <= 40; i++) all.push((await bridge.org(`Conformance run ${String(i).padStart(2, '0')}`)).name);
    const acme = await bridge.org('Acme Learning');
    all.push(acme.name);
    const { page, errors } = await openAt(bridge, '#/orgs');
    await page.getByRole('heading', { level: 1, name: 'Organizations' }).waitFor();
    await page.getByText('25 organizations; more on the next page.').waitFor();

    const search = page.getByRole('search', { name: 'Search organizations' });
    await search.getByRole('searchbox', { name: 'Search organizations' }).fill('ACME');
    await search.getByRole('button', { name: 'Search' }).click();
    await page.getByText('1 organization matching “ACME”.').waitFor();
    expect(await names(page)).to.deep.equal(['Acme Learning']);
    expect(new URL(page.url()).hash).to.equal('#/orgs?q=ACME');
    await screenshot(page, 'organizations-search');
    await page.reload();
    await page.getByText('1 organization matching “ACME”.').waitFor();
    expect(await page.getByRole('searchbox', { name: 'Search organizations' }).inputValue()).to.equal('ACME');
    await search.getByRole('searchbox', { name: 'Search organizations' }).fill('no such thing');
    await search.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No organization’s name or ID contains “no such thing”.').waitFor();

    await search.getByRole('button', { name: 'Show all' }).click();
    await page.getByText('25 organizations; more on the next page.').waitFor();
    const first = await names(page);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('button', { name: 'Previous page' }).waitFor();
    const second = await names(page);
    expect(second).to.have.length(16);
    expect(await page.getByRole('button', { name: 'Next page' }).count(), 'the last page').to.equal(0);
    expect([...first, ...second].sort(), 'every organization, once').to.deep.equal([...all].sort());
    expect(new URL(page.url()).hash).to.match(/^#\/orgs\?after=[a-z0-9-]+$/);

    await page.reload(); // the second page again, reached from the address alone
    await page.getByRole('button', { name: 'First page' }).waitFor();
    expect(await names(page)).to.deep.equal(second);
    await page.getByRole('button', { name: 'First page' }).click();
    await page.getByRole('button', { name: 'Next page' }).waitFor();
    expect(await names(page)).to.deep.equal(first);
    expect(new URL(page.url()).hash).to.equal('#/orgs');
    expect(errors).to.deep.equal([]);
  });

  it("searches and pages an organization's apps and agents, each list on its own", async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org('Acme School');
    for (let i = 1; i <= 27; i++) await bridge.app(org.org_id, `App ${String(i).padStart(2, '0')}`);
    await bridge.agent(org.org_id, 'Maths Tutor');
    await bridge.agent(org.org_id, 'Physics Tutor');
    await bridge.agent(org.org_id, 'Librarian');
    const { page, errors } = await openAt(bridge, `#/orgs/${org.org_id}`);
    await page.getByRole('heading', { level: 1, name: 'Acme School' }).waitFor();
    const apps = page.getByRole('region', { name: 'Apps' });
    const agents = page.getByRole('region', { name: 'Agents' });
    await apps.getByText('25 apps; more on the next page.').waitFor();
    await apps.getByRole('button', { name: 'Next page' }).click();
    await apps.getByText(/^2 apps after app-25-/).waitFor();
    expect(await names(page, apps.locator('table'))).to.deep.equal(['App 26', 'App 27']);

    await agents.getByRole('searchbox', { name: 'Search agents' }).fill('tutor');
    await agents.getByRole('button', { name: 'Search' }).click();
    await agents.getByText('2 agents matching “tutor”.').waitFor();
    expect(await names(page, agents.locator('table'))).to.deep.equal(['Maths Tutor', 'Physics Tutor']);
    expect(new URL(page.url()).hash).to.match(
      new RegExp(`^#/orgs/${org.org_id}\\?apps_after=app-25-[a-z0-9]+&agents_q=tutor$`),
    );
    await page.reload();
    await agents.getByText('2 agents matching “tutor”.').waitFor();
    expect(await names(page, apps.locator('table'))).to.deep.equal(['App 26', 'App 27']);
    expect(errors).to.deep.equal([]);
  });

  it('filters the event log by organization and by a time range given in UTC', async function () {
    const bridge = await startTestBridge();
    const a = await bridge.pair();
    const b = await bridge.pair();
    const send = async (pair: typeof a, thread: string) => {
      pair.appClient.send({ type: 'event', agent_id: pair.agent.agent_id, thread_id: thread, payload: { text: 'hi' } });
      const { event_id } = await pair.appClient.expect('accepted');
      await pair.agentClient.expect('event');
      pair.agentClient.send({ type: 'reply', event_id, content: 'hello', done: true });
      await pair.appClient.expect('reply');
    };
    await send(a, 'at-noon'); // 12:00 UTC on the bridge's clock
    await bridge.advanceWithHeartbeats(3_600_000, [a.appClient, a.agentClient, b.appClient, b.agentClient]);
    await send(b, 'at-one'); // 13:00
    const { page, errors } = await openAt(bridge, '#/events');
    await page.getByRole('heading', { level: 1, name: 'Event log' }).waitFor();
    const rows = page.locator('tbody tr');
    await rows.nth(1).waitFor();
    const apps = async () => (await rows.locator('td:nth-of-type(2)').allTextContents()).sort();
    // The address changes before the view for it replaces the old table: read the rows until the new ones are there.
    const appsOnceShown = async (expected: string[]) => {
      const deadline = Date.now() + 10_000;
      let shown = await apps();
      while (JSON.stringify(shown) !== JSON.stringify(expected) && Date.now() < deadline) {
        await page.waitForTimeout(50);
        shown = await apps();
      }
      return shown;
    };

    await page.getByLabel('Organization ID').fill(a.org.org_id);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(new RegExp(`#/events\\?org_id=${a.org.org_id}$`));
    expect(await appsOnceShown([a.app.app_id])).to.deep.equal([a.app.app_id]);

    await page.getByLabel('Organization ID').fill('');
    await page.getByLabel('From (UTC)').fill('2026-11-22T12:30');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/#\/events\?since=2026-11-22T12%3A30%3A00.000Z$/);
    expect(await appsOnceShown([b.app.app_id])).to.deep.equal([b.app.app_id]);
    expect(await page.getByLabel('From (UTC)').inputValue(), 'the filter stays filled in').to.equal('2026-11-22T12:30');

    await page.getByLabel('Until (UTC, not included)').fill('2026-11-22T12:00');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('Choose a time after the start of the range.').waitFor();
    await page.getByLabel('From (UTC)').fill('');
    await page.getByLabel('Until (UTC, not included)').fill('2026-11-22T12:30');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/#\/events\?until=2026-11-22T12%3A30%3A00.000Z$/);
    expect(await appsOnceShown([a.app.app_id])).to.deep.equal([a.app.app_id]);
    await screenshot(page, 'event-log-time-range');
    expect(errors).to.deep.equal([]);
  });
});
