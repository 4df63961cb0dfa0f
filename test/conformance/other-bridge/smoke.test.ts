// Smoke tests of the other bridge itself, over real sockets: it must be a correct bridge before it can judge the
// conformance suite.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { startOtherBridge, type OtherBridge } from './bridge.js';

type Msg = Record<string, any>;

const PROVISION = fileURLToPath(new URL('./provision.mjs', import.meta.url));

/** A WebSocket client that queues what it receives. */
class Peer {
  readonly inbox: Msg[] = [];
  #waiting: ((m: Msg) => void) | undefined;
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as Msg;
      if (this.#waiting) this.#waiting(msg);
      else this.inbox.push(msg);
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  }

  static async open(url: string, token: string, carrier: 'header' | 'query', header?: string): Promise<Peer> {
    const ws =
      carrier === 'query'
        ? new WebSocket(`${url}?token=${encodeURIComponent(token)}`, {
            headers: header ? { authorization: `Bearer ${header}` } : {},
          })
        : new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
    const peer = new Peer(ws);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    return peer;
  }

  send(msg: unknown): void {
    this.ws.send(JSON.stringify(msg));
  }

  next(ms = 2000): Promise<Msg> {
    const queued = this.inbox.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no message')), ms);
      this.#waiting = (m) => {
        clearTimeout(timer);
        this.#waiting = undefined;
        resolve(m);
      };
    });
  }
}

/** Runs the provisioning script asynchronously: the bridge under test lives in this very process. */
function provision(bridge: OtherBridge, request: unknown): Promise<{ status: number; out: Msg }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [PROVISION],
      { env: { ...process.env, OTHER_BRIDGE_ADMIN_URL: bridge.adminUrl } },
      (error, stdout, stderr) => {
        const status = error ? Number(error.code ?? 1) : 0;
        resolve({ status, out: status === 0 ? (JSON.parse(stdout) as Msg) : { stderr } });
      },
    );
    child.stdin?.end(JSON.stringify(request));
  });
}

const FIXTURES = {
  orgs: ['org1'],
  apps: { app1: 'org1' },
  agents: { agent1: { org: 'org1', ttl_days: 14, description: 'helps', allowlist: ['app1'] } },
};

describe('other bridge (smoke)', function () {
  let bridge: OtherBridge;
  let peers: Peer[];
  beforeEach(async () => {
    bridge = await startOtherBridge();
    peers = [];
  });
  afterEach(async () => {
    for (const p of peers) p.ws.terminate();
    await bridge.close();
  });
  const open = async (...args: Parameters<typeof Peer.open>): Promise<Peer> => {
    const p = await Peer.open(...args);
    peers.push(p);
    return p;
  };

  it('provisions through the script and advances its clock', async function () {
    this.timeout(30000);
    const { status, out } = await provision(bridge, { action: 'create', fixtures: FIXTURES });
    expect(status).to.equal(0);
    expect(out['orgs']['org1']['org_id']).to.be.a('string');
    expect(out['apps']['app1']['token']).to.match(new RegExp(`^rlk_${out['apps']['app1']['app_id']}_`));
    expect(out['agents']['agent1']).to.include({ name: 'agent1', description: 'helps' });
    expect(out['agents']['agent1']['token']).to.match(new RegExp(`^rla_${out['agents']['agent1']['agent_id']}_`));
    expect((await provision(bridge, { action: 'create', fixtures: {} })).out).to.deep.equal({
      orgs: {},
      apps: {},
      agents: {},
    });
    expect(await provision(bridge, { action: 'advance_clock', ms: 1000 })).to.deep.equal({ status: 0, out: {} });
    expect((await provision(bridge, { action: 'no_such_action' })).status).to.equal(3);
  });

  it('accepts both carriers, prefers the query token, and refuses the wrong endpoint', async function () {
    this.timeout(30000);
    const { out } = await provision(bridge, { action: 'create', fixtures: FIXTURES });
    const appToken = out['apps']['app1']['token'];
    const agentToken = out['agents']['agent1']['token'];

    const app = await open(`${bridge.url}/ws/app`, appToken, 'header');
    app.send({ type: 'ping' });
    const pong = await app.next();
    expect(pong['type']).to.equal('pong');
    expect(pong['ts']).to.be.a('number');
    const agent = await open(`${bridge.url}/ws/agent`, agentToken, 'query', 'rla_wrong_token');
    agent.send({ type: 'ping' });
    expect((await agent.next())['type']).to.equal('pong');

    const wrong = await open(`${bridge.url}/ws/app`, agentToken, 'header');
    expect(await wrong.next()).to.include({ type: 'error', code: 'FORBIDDEN' });
    expect((await wrong.closed).code).to.equal(1008);
    const bad = await open(`${bridge.url}/ws/app`, 'rlk_nobody_x', 'query');
    expect(await bad.next()).to.include({ type: 'error', code: 'UNAUTHORIZED' });
  });

  it('carries an event round trip with tokens, reply, sessions and timeout', async function () {
    this.timeout(30000);
    const { out } = await provision(bridge, { action: 'create', fixtures: FIXTURES });
    const appId = out['apps']['app1']['app_id'];
    const agentId = out['agents']['agent1']['agent_id'];
    const app = await open(`${bridge.url}/ws/app`, out['apps']['app1']['token'], 'query');
    const agent = await open(`${bridge.url}/ws/agent`, out['agents']['agent1']['token'], 'header');
    const storedKey = `svc:${agentId}:${appId}:t-1`;

    app.send({ type: 'event', agent_id: agentId, thread_id: 't-1', payload: { kind: 'question', n: 1 } });
    const accepted = await app.next();
    expect(accepted).to.include({ type: 'accepted', agent_id: agentId, session_key: storedKey, status: 'accepted' });
    expect(accepted['event_id']).to.match(/^evt\.[0-9a-f-]{36}$/);
    const event = await agent.next();
    expect(event).to.deep.include({ type: 'event', event_id: accepted['event_id'], app_id: appId, thread_id: 't-1' });
    expect(event).to.deep.include({ session_key: `svc:${appId}:t-1`, payload: { kind: 'question', n: 1 } });

    agent.send({ type: 'token', event_id: event['event_id'], token: 'Hel' });
    agent.send({ type: 'token', event_id: event['event_id'], token: 5 });
    expect(await agent.next()).to.include({ type: 'error', code: 'INVALID_JSON' });
    agent.send({ type: 'token', event_id: event['event_id'], token: 'lo' });
    agent.send({ type: 'reply', event_id: event['event_id'], content: '', done: true, metadata: { model: 'm1' } });
    expect(await app.next()).to.include({ type: 'token', agent_id: agentId, token: 'Hel', seq: 1 });
    expect(await app.next()).to.include({ type: 'token', token: 'lo', seq: 2 });
    const reply = await app.next();
    expect(reply).to.deep.include({
      type: 'reply',
      thread_id: 't-1',
      reply: 'Hello',
      payload: { kind: 'question', n: 1 },
    });
    expect(reply['metadata']).to.include({ tokens_used: 0, model: 'm1', session_key: storedKey });
    agent.send({ type: 'reply', event_id: event['event_id'], content: 'again', done: true });
    expect(await agent.next()).to.deep.equal({
      type: 'error',
      event_id: event['event_id'],
      code: 'INVALID_EVENT_ID',
      error: 'no event of yours in flight with this event_id',
    });

    const listed = (await provision(bridge, { action: 'list_sessions', agent_id: agentId })).out['sessions'];
    expect(listed).to.have.length(1);
    expect(listed[0]).to.include({ session_key: storedKey, agent_id: agentId, app_id: appId, thread_id: 't-1' });
    expect(Date.parse(listed[0].expires_at) - Date.parse(listed[0].created_at)).to.equal(14 * 86_400_000);

    app.send({ type: 'event', agent_id: agentId, thread_id: 't-2', payload: {} });
    const second = await app.next();
    await agent.next();
    await provision(bridge, { action: 'advance_clock', ms: 300_000 });
    expect(await app.next()).to.include({
      type: 'error',
      code: 'AGENT_TIMEOUT',
      event_id: second['event_id'],
      agent_id: agentId,
    });
  });
});
