// Production networking (O12): TLS served by the bridge itself (TLS_CERT_FILE, TLS_KEY_FILE), the X-Forwarded-*
// headers of TRUST_PROXY reverse proxies and of nobody else, and /metrics on a port of its own (METRICS_PORT).
import { request } from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import type { ClientOptions } from 'ws';
import { validateHealth } from '../../generated/index.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { selfSignedCertificate, type TestCertificate } from '../helpers/tls.js';
import { TestClient } from '../helpers/ws-client.js';

const opened: TestClient<any>[] = [];

async function open(
  bridge: TestBridge,
  kind: 'app' | 'agent',
  token: string,
  options: ClientOptions = {},
): Promise<TestClient<any>> {
  const client = await TestClient.connect(bridge.url, kind, token, 'header', token, options);
  opened.push(client);
  return client;
}

/** GET over https trusting only `ca`. */
function httpsGet(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { ca }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

/** Signs in to the dashboard with `headers` added (what a proxy would send) and returns the Set-Cookie header. */
async function signInCookie(bridge: TestBridge, headers: Record<string, string>): Promise<string> {
  const res = await fetch(new URL('/dashboard/session', bridge.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: bridge.url, ...headers },
    body: JSON.stringify({ admin_token: 'test-admin-token-0123456789' }),
  });
  await res.arrayBuffer();
  expect(res.status).to.equal(200);
  return res.headers.get('set-cookie') ?? '';
}

function logLines(level: 'debug' | 'info'): { lines: any[]; log: ReturnType<typeof pino> } {
  const lines: any[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, log: pino({ level, base: undefined }, sink) };
}

describe('production networking (O12)', function () {
  let dir: string;
  let certificate: TestCertificate;

  before(async function () {
    dir = await mkdtemp(join(tmpdir(), 'bridge-tls-'));
    certificate = await selfSignedCertificate(dir);
  });
  after(async function () {
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(function () {
    for (const c of opened.splice(0)) c.close();
  });

  describe('TLS_CERT_FILE and TLS_KEY_FILE', function () {
    it('serve https and wss on the one port: /healthz, and an event from app to agent and back', async function () {
      const bridge = await startTestBridge({ tlsCertFile: certificate.certFile, tlsKeyFile: certificate.keyFile });
      expect(bridge.url).to.equal(`https://127.0.0.1:${bridge.port}`);
      const health = await httpsGet(`${bridge.url}/healthz`, certificate.cert);
      expect(health.status).to.equal(200);
      expect(validateHealth(JSON.parse(health.body))).to.equal(true);

      // Provisioned in-process: fetch has no way to trust a test certificate.
      const org = await bridge.registry.createOrganization({ name: 'TLS Org' });
      const app = await bridge.registry.createApp(org.org_id, { name: 'TLS App' });
      const agent = await bridge.registry.createAgent(org.org_id, { name: 'TLS Agent' });
      const agentClient = await open(bridge, 'agent', agent.token, { ca: certificate.cert });
      await bridge.untilAgentOnline(agent.agent_id, true);
      const appClient = await open(bridge, 'app', app.token, { ca: certificate.cert });
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'over-tls', payload: { text: 'hello' } });
      const { event_id } = await appClient.expect('accepted');
      expect((await agentClient.expect('event')).payload).to.deep.equal({ text: 'hello' });
      agentClient.send({ type: 'reply', event_id, content: 'hello back', done: true });
      expect((await appClient.expect('reply')).reply).to.equal('hello back');
    });

    it('is real TLS: a client that does not trust the certificate is refused, and plain http gets no answer', async function () {
      const bridge = await startTestBridge({ tlsCertFile: certificate.certFile, tlsKeyFile: certificate.keyFile });
      const org = await bridge.registry.createOrganization({ name: 'TLS Org' });
      const app = await bridge.registry.createApp(org.org_id, { name: 'TLS App' });
      let refused: Error | undefined;
      await TestClient.connect(bridge.url, 'app', app.token).catch((err: Error) => (refused = err));
      expect(refused?.message).to.match(/self[- ]signed certificate/);
      const plain = await fetch(`http://127.0.0.1:${bridge.port}/healthz`).then(
        (res) => res.status,
        () => 'no answer',
      );
      expect(plain).not.to.equal(200);
    });
  });

  describe('TRUST_PROXY', function () {
    it('1: X-Forwarded-Proto https makes the dashboard cookie Secure; without it, or with TRUST_PROXY off, no Secure', async function () {
      const trusting = await startTestBridge({ trustProxy: 1 });
      expect(await signInCookie(trusting, { 'x-forwarded-proto': 'https' })).to.match(/; Secure$/);
      expect(await signInCookie(trusting, {})).not.to.include('Secure');

      const off = await startTestBridge();
      expect(await signInCookie(off, { 'x-forwarded-proto': 'https' })).not.to.include('Secure');
    });

    it('1: the per-address bound counts the address the proxy forwarded, not the one a client wrote before it, and logs it', async function () {
      const { lines, log } = logLines('debug');
      const bridge = await startTestBridge({ trustProxy: 1, maxConnectionsPerAddress: 1 }, { log });
      const org = await bridge.org();
      const [a, b, c] = [
        await bridge.app(org.org_id, 'A'),
        await bridge.app(org.org_id, 'B'),
        await bridge.app(org.org_id, 'C'),
      ];
      const from = (xff: string) => ({ headers: { 'x-forwarded-for': xff } });

      await (await open(bridge, 'app', a.token, from('203.0.113.7'))).expectNothingBeforePong();
      // Another client behind the same proxy (same TCP peer, 127.0.0.1) is not counted with the first.
      await (await open(bridge, 'app', b.token, from('203.0.113.8'))).expectNothingBeforePong();
      // The proxy appends the address it saw: what the client wrote on the left is not believed.
      const spoofing = await open(bridge, 'app', c.token, from('198.51.100.1, 203.0.113.7'));
      const error = await spoofing.expect('error');
      expect(error).to.include({ code: 'TOO_MANY_CONNECTIONS' });
      expect(error.error).to.include('203.0.113.7');
      const addresses = lines.filter((l) => l.msg === 'connection open').map((l) => l.address);
      expect(addresses).to.deep.equal(['203.0.113.7', '203.0.113.8']);
    });

    it('0 (the default): X-Forwarded-For is ignored, so a client cannot dodge the per-address bound with it', async function () {
      const bridge = await startTestBridge({ maxConnectionsPerAddress: 1 });
      const org = await bridge.org();
      const [a, b] = [await bridge.app(org.org_id, 'A'), await bridge.app(org.org_id, 'B')];
      await (
        await open(bridge, 'app', a.token, { headers: { 'x-forwarded-for': '203.0.113.7' } })
      ).expectNothingBeforePong();
      const second = await open(bridge, 'app', b.token, { headers: { 'x-forwarded-for': '203.0.113.8' } });
      const error = await second.expect('error');
      expect(error).to.include({ code: 'TOO_MANY_CONNECTIONS' });
      expect(error.error).to.include('127.0.0.1');
    });
  });

  describe('METRICS_PORT', function () {
    it('serves /metrics on its own port (127.0.0.1 by default) and no longer on the main one', async function () {
      const bridge = await startTestBridge({ metricsPort: 0 });
      expect(bridge.metricsUrl).to.match(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect(bridge.metricsUrl).not.to.include(`:${bridge.port}/`);
      const scraped = await fetch(bridge.metricsUrl!);
      expect(scraped.status).to.equal(200);
      expect(await scraped.text()).to.include('bridge_connections');
      const main = await bridge.http('GET', '/metrics', { token: null });
      expect(main).to.deep.include({ status: 404 });
      expect(main.body.code).to.equal('NOT_FOUND');
    });

    it('unset: /metrics stays on the main port', async function () {
      const bridge = await startTestBridge();
      expect(bridge.metricsUrl).to.equal(undefined);
      const res = await fetch(`${bridge.url}/metrics`);
      expect(res.status).to.equal(200);
      await res.arrayBuffer();
    });
  });
});
