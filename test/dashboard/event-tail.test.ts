// The event log's live tail (D8) in Chromium: once live, an event logged meanwhile appears without a reload,
// marked new, with the page's filters still applied; paused, the page asks nothing. The page's timers run on
// Playwright's clock, so the 3 s between reads take no real time.
import { expect } from 'chai';
import { startTestBridge } from '../helpers/bridge.js';
import type { AgentClient, AppClient } from '../helpers/ws-client.js';
import { browserSuite, goTo, screenshot, signIn } from './browser.js';

const TAIL_MS = 3000;

/** One event from the app, answered by the agent with a token and a reply. */
async function deliverOne(
  appClient: AppClient,
  agentClient: AgentClient,
  agentId: string,
  threadId: string,
): Promise<string> {
  appClient.send({ type: 'event', agent_id: agentId, thread_id: threadId, payload: { text: 'Hello' } });
  const { event_id } = await appClient.expect('accepted');
  await agentClient.expect('event');
  agentClient.send({ type: 'token', event_id, token: 'Hi.' });
  agentClient.send({ type: 'reply', event_id, content: '', done: true });
  await appClient.expect('token');
  await appClient.expect('reply');
  return event_id;
}

describe('dashboard event tail', function () {
  this.timeout(90_000);
  const { open } = browserSuite();

  it('shows a new event without a reload, marked new and filtered, and asks nothing while paused', async function () {
    const bridge = await startTestBridge();
    const { org, app, agent, appClient, agentClient } = await bridge.pair();
    const other = await bridge.app(org.org_id, 'Other App');
    const otherClient = await bridge.connectApp(other.token);
    const first = await deliverOne(appClient, agentClient, agent.agent_id, 'lesson-1');
    const { page, errors } = await open(bridge);
    await page.clock.install();
    const reads: string[] = [];
    page.on('request', (r) => new URL(r.url()).pathname === '/admin/v1/events' && reads.push(new URL(r.url()).search));
    await signIn(page);
    await goTo(page, 'Event log');
    await page.getByLabel('App ID').fill(app.app_id);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('row').filter({ hasText: first }).waitFor();

    const readsBeforeLive = reads.length;
    await page.getByRole('button', { name: 'Live' }).click();
    await page
      .getByRole('status')
      .getByText(/^Live: the log is read every 3 seconds/)
      .waitFor();
    const second = await deliverOne(appClient, agentClient, agent.agent_id, 'lesson-2');
    const elsewhere = await deliverOne(otherClient, agentClient, agent.agent_id, 'shelf-1');
    await page.clock.runFor(TAIL_MS);
    const fresh = page.getByRole('row').filter({ hasText: second });
    await fresh.getByText('new', { exact: true }).waitFor();
    await page.getByText('Live: 1 new event').waitFor();
    expect(
      await page.getByRole('row').filter({ hasText: first }).getByText('new', { exact: true }).count(),
      'the event shown before is not new',
    ).to.equal(0);
    expect(await page.getByRole('row').filter({ hasText: elsewhere }).count(), 'the filter still applies').to.equal(0);
    expect(reads.length).to.be.greaterThan(readsBeforeLive);
    expect(
      reads.slice(readsBeforeLive).every((q) => q.includes(`app_id=${app.app_id}`)),
      'each read with the filters',
    ).to.equal(true);
    await screenshot(page, 'event-tail');

    await page.getByRole('button', { name: 'Pause the live tail' }).click();
    await page.getByText('Paused: the log is not read until you go live again.').waitFor();
    const readsWhenPaused = reads.length;
    const third = await deliverOne(appClient, agentClient, agent.agent_id, 'lesson-3');
    await page.clock.runFor(3 * TAIL_MS);
    expect(reads.length, 'no request while paused').to.equal(readsWhenPaused);
    expect(await page.getByRole('row').filter({ hasText: third }).count()).to.equal(0);

    await page.getByRole('button', { name: 'Live' }).click();
    await page.getByRole('row').filter({ hasText: third }).getByText('new', { exact: true }).waitFor();
    await goTo(page, 'Overview');
    const readsWhenLeft = reads.length;
    await page.clock.runFor(3 * TAIL_MS);
    expect(reads.length, 'leaving the view stops the tail').to.equal(readsWhenLeft);
    expect(errors).to.deep.equal([]);
  });
});
