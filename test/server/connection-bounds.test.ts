// Live connections are bounded in all, per remote address and per app (L18): the handshake over a bound is refused
// with TOO_MANY_CONNECTIONS (close 4503), counted by bound, and a closed connection makes room again. Refused
// handshakes are logged a burst at a time, however many a client makes.
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { CLOSE_CODES } from '../../generated/index.js';
import { LOG_WINDOW_MS } from '../../src/core/burst-log.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { sample, scrape } from '../helpers/metrics.js';
import { TestClient } from '../helpers/ws-client.js';

const opened: TestClient<any>[] = [];

async function open(bridge: TestBridge, kind: 'app' | 'agent', token: string | undefined): Promise<TestClient<any>> {
  const client = await TestClient.connect(bridge.url, kind, token);
  opened.push(client);
  return client;
}

/** The client was refused with TOO_MANY_CONNECTIONS; returns the error's text. */
async function tooMany(client: TestClient<any>): Promise<string> {
  const error = await client.expect('error');
  expect(error.code).to.equal('TOO_MANY_CONNECTIONS');
  expect(await client.waitForClose()).to.deep.equal({
    code: CLOSE_CODES.TOO_MANY_CONNECTIONS,
    reason: 'TOO_MANY_CONNECTIONS',
  });
  return error.error;
}

describe('connection bounds (L18)', function () {
  afterEach(function () {
    for (const c of opened.splice(0)) c.close();
  });

  it('refuses an app connection over MAX_CONNECTIONS_PER_APP; another app still connects, and a closed one makes room', async function () {
    const bridge = await startTestBridge({ maxConnectionsPerApp: 2 });
    const { org, app } = await bridge.pair(); // one connection of the app already
    const second = await open(bridge, 'app', app.token);
    await second.expectNothingBeforePong();
    expect(await tooMany(await open(bridge, 'app', app.token)))
      .to.include(app.app_id)
      .and.include('2 connections');

    const other = await bridge.app(org.org_id, 'Other');
    await (await open(bridge, 'app', other.token)).expectNothingBeforePong();
    second.close();
    await second.waitForClose();
    while (bridge.bridge.stats().apps > 2) await new Promise((resolve) => setTimeout(resolve, 5)); // the bridge saw it go
    await (await open(bridge, 'app', app.token)).expectNothingBeforePong();
    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_connections_refused_total', { limit: 'app' })).to.equal(1);
    expect(sample(metrics, 'bridge_handshakes_refused_total', { code: 'TOO_MANY_CONNECTIONS' })).to.equal(1);
  });

  it("refuses apps and agents alike over MAX_CONNECTIONS_PER_ADDRESS, on the endpoint's own error frame", async function () {
    const bridge = await startTestBridge({ maxConnectionsPerAddress: 3 });
    const { org } = await bridge.pair(); // two connections from 127.0.0.1
    const app = await bridge.app(org.org_id, 'Third');
    await (await open(bridge, 'app', app.token)).expectNothingBeforePong();
    const agent = await bridge.agent(org.org_id, 'Late Agent');
    const refused = await open(bridge, 'agent', agent.token);
    expect(await tooMany(refused)).to.include('127.0.0.1');
    expect(bridge.bridge.stats()).to.include({ apps: 2, agents: 1 });
    expect(sample(await scrape(bridge.url), 'bridge_connections_refused_total', { limit: 'address' })).to.equal(1);
  });

  it('refuses any connection over MAX_CONNECTIONS, whatever its address or app; an agent over it does not replace the connected one', async function () {
    const bridge = await startTestBridge({ maxConnections: 2, maxConnectionsPerAddress: 0 });
    const { agent, agentClient } = await bridge.pair();
    expect(await tooMany(await open(bridge, 'agent', agent.token))).to.include('2 connections');
    await agentClient.expectNothingBeforePong(); // still the agent's connection
    expect(sample(await scrape(bridge.url), 'bridge_connections_refused_total', { limit: 'total' })).to.equal(1);
  });

  it('logs a flood of refused handshakes a burst at a time, with the counts, and counts each one by code', async function () {
    const lines: any[] = [];
    const sink = new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const bridge = await startTestBridge({}, { log: pino({ level: 'info', base: undefined }, sink) });
    const { app } = await bridge.pair();
    const refusals = () => lines.filter((l) => /^handshakes refused/.test(l.msg));
    for (let i = 0; i < 40; i++) await (await open(bridge, 'app', `rlk_nobody_${'x'.repeat(32)}${i}`)).waitForClose();
    for (let i = 0; i < 10; i++) await (await open(bridge, 'agent', app.token)).waitForClose();
    expect(refusals()).to.have.length(1); // the first at once; the rest wait for the window
    expect(refusals()[0]).to.include({ refused: 1 });

    bridge.clock.advance(LOG_WINDOW_MS);
    expect(refusals()).to.have.length(2);
    expect(refusals()[1]).to.deep.include({ refused: 49, codes: { UNAUTHORIZED: 39, FORBIDDEN: 10 } });
    bridge.clock.advance(LOG_WINDOW_MS); // a quiet window ends the burst: the next refusal is logged at once again
    await (await open(bridge, 'app', undefined)).waitForClose();
    expect(refusals()).to.have.length(3);

    const metrics = await scrape(bridge.url);
    expect(sample(metrics, 'bridge_handshakes_refused_total', { code: 'UNAUTHORIZED' })).to.equal(41);
    expect(sample(metrics, 'bridge_handshakes_refused_total', { code: 'FORBIDDEN' })).to.equal(10);
  });
});
