// The overview, the landing view (D8), in Chromium: its numbers follow the bridge's (checked against /metrics) as
// apps and agents connect and events flow, and with several nodes it adds them up, shows each and names those
// that do not answer. The page's timers run on Playwright's clock and the bridge's on the test clock, so a sample
// and the poll that reads it take no real time.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import type { Overview, OverviewSample } from '../../generated/index.js';
import { LIMITS } from '../../generated/index.js';
import { startTestBridge } from '../helpers/bridge.js';
import { sample, scrape } from '../helpers/metrics.js';
import { browserSuite, goTo, screenshot, signIn } from './browser.js';

const tileValue = (page: Page, title: string) =>
  page.getByRole('region', { name: title, exact: true }).locator('.value');

describe('dashboard overview', function () {
  this.timeout(90_000);
  const { open } = browserSuite();

  it('moves with the bridge as apps and agents connect and events flow, by the same numbers as /metrics', async function () {
    const bridge = await startTestBridge();
    const { page, errors } = await open(bridge);
    await page.clock.install();
    const polls: string[] = [];
    page.on(
      'request',
      (r) => new URL(r.url()).pathname === '/admin/v1/overview' && polls.push(new URL(r.url()).search),
    );
    await signIn(page);
    await tileValue(page, 'Apps').getByText('0 apps online').waitFor();
    await page.getByText('Newest sample not taken yet').waitFor();

    const { org, agent, appClient, agentClient } = await bridge.pair();
    const second = await bridge.connectApp((await bridge.app(org.org_id, 'Second App')).token);
    const deliver = async (thread: string, takesMs = 0) => {
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: thread, payload: { text: 'Hello' } });
      const { event_id } = await appClient.expect('accepted');
      await agentClient.expect('event');
      bridge.clock.advance(takesMs);
      for (const token of ['One ', 'two ', 'three.']) agentClient.send({ type: 'token', event_id, token });
      agentClient.send({ type: 'reply', event_id, content: '', done: true });
      for (let i = 0; i < 3; i++) await appClient.expect('token');
      await appClient.expect('reply');
    };
    for (const thread of ['a', 'b']) await deliver(thread);
    second.send({ type: 'event', agent_id: 'no-such-agent', thread_id: 'c', payload: { text: 'Hello' } });
    expect(await second.expect('error')).to.include({ code: 'AGENT_NOT_FOUND' });

    // The bridge takes its sample on its clock; the page asks on its own.
    bridge.clock.advance(LIMITS.overviewSampleMs);
    await page.clock.runFor(LIMITS.overviewSampleMs);
    await tileValue(page, 'Apps').getByText('2 apps online').waitFor();
    const metrics = await scrape(bridge.url);
    const perSecond = (n: number | undefined) =>
      `${Number(((n ?? NaN) / (LIMITS.overviewSampleMs / 1000)).toFixed(1))}/s`;
    expect(await page.getByRole('region', { name: 'Apps', exact: true }).locator('.detail').textContent()).to.equal(
      `${sample(metrics, 'bridge_connections', { kind: 'app' })} connections (instances)`,
    );
    expect(await tileValue(page, 'Agents').textContent()).to.equal('1 agent online');
    expect(await page.getByRole('region', { name: 'Agents', exact: true }).locator('.detail').textContent()).to.equal(
      `${sample(metrics, 'bridge_connections', { kind: 'agent' })} connection`,
    );
    expect(await tileValue(page, 'Events in flight').textContent()).to.equal(
      String(sample(metrics, 'bridge_events_in_flight')),
    );
    expect(await tileValue(page, 'Accepted events').textContent()).to.equal(
      perSecond(sample(metrics, 'bridge_events_total', { status: 'delivered', outcome: 'replied' })),
    );
    expect(await tileValue(page, 'Rejected events').textContent()).to.equal(
      perSecond(sample(metrics, 'bridge_events_total', { status: 'rejected', outcome: 'rejected' })),
    );
    expect(await tileValue(page, 'Fragments').textContent()).to.equal(
      perSecond(sample(metrics, 'bridge_tokens_forwarded_total')),
    );
    expect(await tileValue(page, 'Errors').textContent()).to.equal('1 error');
    expect(
      await page.getByRole('region', { name: 'Errors', exact: true }).getByRole('row').allTextContents(),
    ).to.deep.equal(['CodeEvents', 'AGENT_NOT_FOUND1']);
    expect(await tileValue(page, 'Latency').textContent(), 'the frozen clock: replies in no time').to.equal(
      'p50 0 ms · p99 0 ms',
    );
    await page.getByRole('img', { name: /^Accepted events per second: accepted 0\.4\/s now/ }).waitFor();
    expect(await page.getByRole('heading', { name: 'Nodes' }).count(), 'one node: no table of nodes').to.equal(0);

    // Five minutes more, busier and quieter, read by one poll (`after` the sample held): the charts draw lines.
    for (let i = 0; i < 60; i++) {
      for (let n = 0; n < (i * 7) % 4; n++) await deliver(`t${i}`, 40 * ((i + n) % 9));
      bridge.clock.advance(LIMITS.overviewSampleMs - (bridge.clock.now() % LIMITS.overviewSampleMs));
    }
    await page.clock.runFor(LIMITS.overviewSampleMs);
    await page.getByText('Newest sample 2026-11-22 12:05:05 UTC.').waitFor();
    await screenshot(page, 'overview');

    appClient.close();
    second.close();
    await appClient.waitForClose();
    await second.waitForClose();
    bridge.clock.advance(LIMITS.overviewSampleMs);
    await page.clock.runFor(LIMITS.overviewSampleMs);
    await tileValue(page, 'Apps').getByText('0 apps online').waitFor();
    expect(await tileValue(page, 'Accepted events').textContent(), 'nothing in the newest interval').to.equal('0/s');
    expect(polls.at(-1), 'once it holds a sample, the page asks only for newer ones').to.equal(
      `?after=${Date.parse('2026-11-22T12:05:05.000Z')}`,
    );

    const before = polls.length;
    await goTo(page, 'Organizations');
    await page.clock.runFor(3 * LIMITS.overviewSampleMs);
    expect(polls.length, 'leaving the overview stops its polling').to.equal(before);
    expect(errors).to.deep.equal([]);
  });

  it('adds several nodes up, shows each in a table with their own numbers, and names the nodes that do not answer', async function () {
    const bridge = await startTestBridge();
    const { page, errors } = await open(bridge);
    const at = Date.parse('2026-11-22T12:00:00.000Z');
    const step = LIMITS.overviewSampleMs;
    const samples = (node: number): OverviewSample[] =>
      Array.from({ length: 120 }, (_, i) => ({
        at: at - (119 - i) * step,
        app_connections: 4 + node + (i % 7),
        agent_connections: 2,
        events_in_flight: i % 5,
        accepted: 10 * node + (i % 11),
        rejected: i % 30 === 0 ? 2 : 0,
        fragments: 300 + 20 * (i % 13),
        replied: 10 * node,
        errors: (i % 30 === 0
          ? { RATE_LIMIT_EXCEEDED: 2 }
          : i === 118
            ? { AGENT_TIMEOUT: node }
            : {}) as OverviewSample['errors'],
        latency_p50_ms: 400 * node,
        latency_p99_ms: 1000 * node + 200,
      }));
    const now = (node: number) => ({
      app_connections: 4 + node,
      agent_connections: 2,
      apps_online: 2 + node,
      agents_online: 2,
      events_in_flight: node,
    });
    const stub: Overview = {
      at,
      sample_ms: step,
      window_ms: LIMITS.overviewWindowMs,
      nodes: [1, 2].map((n) => ({ node_id: `node-${n}`, now: now(n), samples: samples(n) })),
      missing_nodes: ['node-3'],
    };
    const asked: string[] = [];
    await page.route('**/admin/v1/overview*', (route) => {
      asked.push(new URL(route.request().url()).search);
      return route.fulfill({
        json: asked.length === 1 ? stub : { ...stub, nodes: stub.nodes.map((n) => ({ ...n, samples: [] })) },
      });
    });
    await signIn(page);

    await tileValue(page, 'Apps').getByText('7 apps online').waitFor();
    expect(await tileValue(page, 'Agents').textContent()).to.equal('4 agents online');
    expect(await tileValue(page, 'Events in flight').textContent()).to.equal('3');
    // The newest interval (i = 119): accepted 10 + 9 and 20 + 9 in 5 s; p50 weighted by replies (10 x 400 + 20 x 800) / 30.
    expect(await tileValue(page, 'Accepted events').textContent()).to.equal('9.6/s');
    expect(await tileValue(page, 'Latency').textContent()).to.equal('p50 667 ms · p99 2.2 s');
    await page.getByText('across nodes p50 is their mean weighted by replies, p99 the largest of theirs').waitFor();
    await page.getByRole('alert').getByText('Not answering, so left out of these numbers: node-3.').waitFor();
    const errorsTile = page.getByRole('region', { name: 'Errors', exact: true });
    expect(await errorsTile.getByRole('row').allTextContents()).to.deep.equal([
      'CodeEvents',
      'RATE_LIMIT_EXCEEDED8',
      'AGENT_TIMEOUT3',
    ]);
    const chart = page.getByRole('img', {
      name: /^Accepted events per second: accepted 9\.6\/s now; at most 10\/s in the last 10 minutes\.$/,
    });
    await chart.waitFor();

    const nodes = page.getByRole('table', { name: 'Each node now, and its newest sample' });
    expect(await nodes.getByRole('row').nth(2).allInnerTexts()).to.deep.equal([
      ['node-2', '4', '6', '2', '2', '2', '5.8', '0', '68', '800 ms', '2.2 s'].join('\t'),
    ]);
    await screenshot(page, 'overview-nodes');
    expect(asked[0], 'the first poll asks for everything').to.equal('');
    expect(errors).to.deep.equal([]);
  });
});
