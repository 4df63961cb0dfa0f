// No slot without a token (L21): TCP connections that have not completed an authenticated handshake are bounded in
// all and per address, an extra one answered 503 TOO_MANY_CONNECTIONS before its request is read; authenticated
// connections leave the count; late requests get 408 REQUEST_TIMEOUT; and the probes answer on METRICS_PORT
// whatever happens on the main port.
import { connect as netConnect, type Socket } from 'node:net';
import { expect } from 'chai';
import { LIMITS, validators } from '../../generated/index.js';
import { ADMIN_TOKEN, startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { eventually } from '../helpers/eventually.js';
import { parseMetrics, sample } from '../helpers/metrics.js';
import { TestClient } from '../helpers/ws-client.js';

const held: Socket[] = [];

/** A TCP connection from `localAddress` that sends half of an upgrade request and holds it. */
async function halfRequest(bridge: TestBridge, localAddress = '127.0.0.1'): Promise<Socket> {
  const socket = netConnect({ port: bridge.port, host: '127.0.0.1', localAddress });
  socket.on('error', () => {});
  held.push(socket);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write('GET /v1/ws/app HTTP/1.1\r\nHost: bridge\r\nUpgrade: websocket\r\n');
  return socket;
}

/** What a new TCP connection from `localAddress` reads without sending anything, until the bridge closes it. */
async function answerToNothing(bridge: TestBridge, localAddress = '127.0.0.1'): Promise<string> {
  const socket = netConnect({ port: bridge.port, host: '127.0.0.1', localAddress });
  socket.on('error', () => {});
  let text = '';
  socket.on('data', (chunk) => (text += chunk.toString()));
  await new Promise((resolve) => socket.once('close', resolve));
  return text;
}

/** The status line and the JSON body of a raw HTTP answer. */
function parseAnswer(raw: string): { status: string; body: any } {
  const [head, body] = raw.split('\r\n\r\n', 2) as [string, string];
  return { status: head.split('\r\n')[0]!, body: JSON.parse(body) };
}

async function metricsOf(url: string) {
  return parseMetrics(await (await fetch(url)).text());
}

describe('no slot without a token (L21)', function () {
  afterEach(function () {
    for (const s of held.splice(0)) s.destroy();
  });

  it('answers the connection over MAX_UNAUTHENTICATED_CONNECTIONS_PER_ADDRESS 503 TOO_MANY_CONNECTIONS before its request; other addresses and authenticated connections are not affected', async function () {
    const bridge = await startTestBridge({ maxUnauthenticatedConnectionsPerAddress: 3, metricsPort: 0 });
    // The tests' own traffic comes from 127.0.0.1; the offender from 127.0.0.3.
    const { app, agent, appClient, agentClient } = await bridge.pair();
    const before = sample(await metricsOf(bridge.metricsUrl!), 'bridge_unauthenticated_connections')!;
    // Authenticated connections from the offender's address leave the count: two of them take no unauthenticated slot.
    for (let i = 0; i < 2; i++)
      await (
        await TestClient.connect(bridge.url, 'app', app.token, 'header', app.token, { localAddress: '127.0.0.3' })
      ).expectNothingBeforePong();
    for (let i = 0; i < 3; i++) await halfRequest(bridge, '127.0.0.3');
    const metrics = await eventually(
      'the bridge counted them',
      () => metricsOf(bridge.metricsUrl!),
      (m) => sample(m, 'bridge_unauthenticated_connections') === before + 3,
    );
    expect(sample(metrics, 'bridge_connections', { kind: 'app' })).to.equal(3);

    const refused = parseAnswer(await answerToNothing(bridge, '127.0.0.3'));
    expect(refused.status).to.equal('HTTP/1.1 503 Service Unavailable');
    expect(validators.HttpError(refused.body), JSON.stringify(refused.body)).to.equal(true);
    expect(refused.body).to.deep.equal({
      code: 'TOO_MANY_CONNECTIONS',
      error:
        'Address 127.0.0.3 has 3 connections that have not completed an authenticated handshake, the limit per address; retry later.',
    });

    // Another address connects, and the connections already open go on.
    const other = await bridge.connectApp(app.token);
    await other.expectNothingBeforePong();
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    const { event_id } = await appClient.expect('accepted');
    await agentClient.expect('event');
    agentClient.send({ type: 'reply', event_id, content: 'still here', done: true });
    expect((await appClient.expect('reply')).reply).to.equal('still here');
    other.close();

    // One held connection goes: the address has room again.
    held.shift()!.destroy();
    await eventually(
      'the bridge saw it go',
      () => metricsOf(bridge.metricsUrl!),
      (m) => sample(m, 'bridge_unauthenticated_connections')! <= before + 2,
    );
    await (
      await TestClient.connect(bridge.url, 'app', app.token, 'header', app.token, { localAddress: '127.0.0.3' })
    ).expectNothingBeforePong();
    const after = await metricsOf(bridge.metricsUrl!);
    expect(sample(after, 'bridge_unauthenticated_connections_refused_total', { bound: 'address' })).to.equal(1);
    expect(sample(after, 'bridge_unauthenticated_connections_refused_total', { bound: 'total' })).to.equal(0);
  });

  it('answers /healthz and /readyz on METRICS_PORT while MAX_UNAUTHENTICATED_CONNECTIONS are held on the main port', async function () {
    const bridge = await startTestBridge({
      maxUnauthenticatedConnections: 4,
      maxUnauthenticatedConnectionsPerAddress: 0,
      metricsPort: 0,
    });
    for (let i = 0; i < 4; i++) await halfRequest(bridge, `127.0.0.${i + 2}`);
    const probes = new URL('/', bridge.metricsUrl!);
    await eventually(
      'the bridge counted them',
      () => metricsOf(bridge.metricsUrl!),
      (m) => sample(m, 'bridge_unauthenticated_connections') === 4,
    );

    const refused = parseAnswer(await answerToNothing(bridge, '127.0.0.9'));
    expect(refused.status).to.equal('HTTP/1.1 503 Service Unavailable');
    expect(refused.body).to.deep.equal({
      code: 'TOO_MANY_CONNECTIONS',
      error: 'The bridge has 4 connections that have not completed an authenticated handshake, its limit; retry later.',
    });

    const health = await fetch(new URL('/healthz', probes));
    expect(health.status).to.equal(200);
    expect(((await health.json()) as { status: string }).status).to.equal('ok');
    const ready = await fetch(new URL('/readyz', probes));
    expect(ready.status).to.equal(200);
    expect(await ready.json()).to.deep.equal({ status: 'ready' });
    expect(
      sample(await metricsOf(bridge.metricsUrl!), 'bridge_unauthenticated_connections_refused_total', {
        bound: 'total',
      }),
    ).to.equal(1);
  });

  it('gives a new connection the slot of the oldest held unauthenticatedEvictAfterMs with no request answered on it, and closes that one', async function () {
    const bridge = await startTestBridge({
      maxUnauthenticatedConnections: 3,
      maxUnauthenticatedConnectionsPerAddress: 0,
      metricsPort: 0,
    });
    const oldest = await halfRequest(bridge, '127.0.0.2');
    const closed = new Promise((resolve) => oldest.once('close', resolve));
    bridge.clock.advance(LIMITS.unauthenticatedEvictAfterMs - 1);
    for (let i = 0; i < 2; i++) await halfRequest(bridge, `127.0.0.${i + 3}`);
    await eventually(
      'the bridge counted them',
      () => metricsOf(bridge.metricsUrl!),
      (m) => sample(m, 'bridge_unauthenticated_connections') === 3,
    );

    // None has held its slot long enough yet: the newcomer is refused, as before.
    expect(parseAnswer(await answerToNothing(bridge, '127.0.0.9')).status).to.equal('HTTP/1.1 503 Service Unavailable');
    bridge.clock.advance(1);
    // The oldest has now: a probe and a new app get in, and the oldest is closed for them.
    const health = await fetch(new URL('/healthz', bridge.url), { headers: { connection: 'close' } });
    expect(health.status).to.equal(200);
    await closed;
    const m = await metricsOf(bridge.metricsUrl!);
    expect(sample(m, 'bridge_unauthenticated_connections_evicted_total')).to.equal(1);
    expect(sample(m, 'bridge_unauthenticated_connections_refused_total', { bound: 'total' })).to.equal(1);
    // The two younger ones still hold theirs: a fourth connection, none of them old enough, is refused again.
    await eventually(
      'the probe left its slot',
      () => metricsOf(bridge.metricsUrl!),
      (mm) => sample(mm, 'bridge_unauthenticated_connections') === 2,
    );
    await halfRequest(bridge, '127.0.0.5');
    expect(parseAnswer(await answerToNothing(bridge, '127.0.0.9')).status).to.equal('HTTP/1.1 503 Service Unavailable');
  });

  it('never takes the slot of a connection whose request is being answered', async function () {
    const bridge = await startTestBridge({
      maxUnauthenticatedConnections: 1,
      maxUnauthenticatedConnectionsPerAddress: 0,
      metricsPort: 0,
    });
    // A request the bridge has begun to answer: an admin call whose body is still arriving.
    const slow = netConnect({ port: bridge.port, host: '127.0.0.1', localAddress: '127.0.0.2' });
    slow.on('error', () => {});
    held.push(slow);
    await new Promise((resolve) => slow.once('connect', resolve));
    slow.write(
      `POST /admin/v1/organizations HTTP/1.1\r\nHost: bridge\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name": "Sl',
    );
    await eventually(
      'the bridge is answering it',
      () => metricsOf(bridge.metricsUrl!),
      (m) => sample(m, 'bridge_unauthenticated_connections') === 1,
    );
    bridge.clock.advance(LIMITS.unauthenticatedEvictAfterMs * 10);
    expect(parseAnswer(await answerToNothing(bridge, '127.0.0.9')).status).to.equal('HTTP/1.1 503 Service Unavailable');
    expect(slow.destroyed).to.equal(false);
  });

  it("sets the server's deadlines, and answers a late request 408 REQUEST_TIMEOUT with the error body, counted", async function () {
    const bridge = await startTestBridge();
    expect(bridge.server.headersTimeout).to.equal(LIMITS.httpHeadersTimeoutMs);
    expect(bridge.server.requestTimeout).to.equal(LIMITS.httpRequestTimeoutMs);
    // Node's check of the deadlines fires on real time: the test hands the server what that check would.
    const serverSide = new Promise<Socket>((resolve) => bridge.server.once('connection', resolve));
    const client = await halfRequest(bridge);
    let text = '';
    client.on('data', (chunk) => (text += chunk.toString()));
    const closed = new Promise((resolve) => client.once('close', resolve));
    (await serverSide).emit('error', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }));
    await closed;
    const answer = parseAnswer(text);
    expect(answer.status).to.equal('HTTP/1.1 408 Request Timeout');
    expect(answer.body).to.deep.equal({
      code: 'REQUEST_TIMEOUT',
      error: 'The request did not arrive whole in time: its headers within 10 s, all of it within 30 s.',
    });
    expect(sample(await metricsOf(`${bridge.url}/metrics`), 'bridge_http_requests_timed_out_total')).to.equal(1);
  });
});
