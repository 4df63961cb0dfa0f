// The agent connector against a real bridge (startTestBridge): events reach the handler with their session, tokens
// and the reply reach the app, every handler outcome ends the event (§7), bridge errors never crash it, it
// reconnects, and its health endpoint and notifications (§6.5) tell what happens. Time: frozen clocks only.
import { once } from 'node:events';
import WebSocket from 'ws';
import { expect } from 'chai';
import {
  CLOSE_CODES,
  LIMITS,
  validateConnectorHealth,
  type AgentCreated,
  type AppCreated,
} from '../../generated/index.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import type { Config } from '../../src/config.js';
import type { Logger } from '../../src/shared/logger.js';
import { resolveConnectorConfig } from '../../src/sdk/connector/config.js';
import { Connector, ConnectorStartError, type ConnectorOptions } from '../../src/sdk/connector/connector.js';
import type { AgentContext, AgentEvent, AgentHandler } from '../../src/sdk/connector/handler.js';
import { CONNECTOR_NOTIFICATIONS } from '../../src/sdk/connector/notifications.js';
import echo from '../../examples/echo-agent.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';
import type { AppClient } from '../helpers/ws-client.js';

const DAY = 86_400_000;

type Note = { type: string } & Record<string, unknown>;

interface Setup {
  bridge: TestBridge;
  app: AppCreated;
  agent: AgentCreated;
  connector: Connector;
  clock: AdjustableClock;
  appClient: AppClient;
  notes: Note[];
  logs: string[];
  sockets: WebSocket[];
  /** Sends an app event and returns its event_id once accepted. */
  send(payload?: object, threadId?: string): Promise<string>;
}

const connectors: Connector[] = [];

interface SetupOptions extends Partial<ConnectorOptions> {
  bridgeConfig?: Partial<Config>;
  health?: boolean;
  token?: (agent: AgentCreated) => string;
  start?: boolean;
}

async function setup(handler: AgentHandler, options: SetupOptions = {}): Promise<Setup> {
  const { bridgeConfig, health, token, start = true, ...connectorOptions } = options;
  const bridge = await startTestBridge(bridgeConfig);
  const org = await bridge.org();
  const app = await bridge.app(org.org_id);
  const agent = await bridge.agent(org.org_id);
  const config = resolveConnectorConfig(
    {
      connection: { url: '${TEST_BRIDGE_AGENT_URL}' },
      agents: [{ agent_id: agent.agent_id, token: '${TEST_AGENT_TOKEN}', context: { persona: 'echo' } }],
      ...(health ? { health: { port: 0, path: '/health' } } : {}),
    },
    {
      env: {
        TEST_BRIDGE_AGENT_URL: `${bridge.url.replace(/^http/, 'ws')}/v1/ws/agent`,
        TEST_AGENT_TOKEN: token ? token(agent) : agent.token,
      },
    },
  );
  const clock = new AdjustableClock({ frozen: true, start: Date.parse('2026-11-22T12:00:00.000Z') });
  const logs: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (_f, m) => logs.push(m), error: (_f, m) => logs.push(m) };
  const sockets: WebSocket[] = [];
  const connector = new Connector(config, {
    handler,
    clock,
    logger,
    ...connectorOptions,
    connection: {
      random: () => 0, // no jitter: delays are exactly 1 s, 2 s, ...
      createSocket: (url, headers) => {
        const ws = new WebSocket(url, { headers, perMessageDeflate: false });
        sockets.push(ws);
        return ws;
      },
      ...connectorOptions.connection,
    },
  });
  connectors.push(connector);
  const notes: Note[] = [];
  for (const type of CONNECTOR_NOTIFICATIONS) connector.on(type, (fields: object) => notes.push({ type, ...fields }));
  if (start) {
    await connector.start();
    await bridge.untilAgentOnline(agent.agent_id, true);
  }
  const appClient = await bridge.connectApp(app.token);
  return {
    bridge,
    app,
    agent,
    connector,
    clock,
    appClient,
    notes,
    logs,
    sockets,
    async send(payload = {}, threadId = 'lesson-42') {
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: threadId, payload });
      return (await appClient.expect('accepted')).event_id;
    },
  };
}

/** Waits for I/O (never for time): polls until `check` passes. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

async function getHealth(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

describe('agent connector against a real bridge', function () {
  afterEach(async function () {
    await Promise.all(connectors.splice(0).map((c) => c.close()));
  });

  it('runs the echo handler: the app gets every token and the joined reply; health and notifications follow', async function () {
    const s = await setup(echo, { health: true });
    const eventId = await s.send({ text: 'hello brave new world' });

    const tokens: string[] = [];
    for (let i = 0; i < 6; i++) {
      const token = await s.appClient.expect('token');
      expect(token).to.include({ event_id: eventId, agent_id: s.agent.agent_id });
      tokens.push(token.token);
    }
    expect(tokens).to.deep.equal(['You ', 'said: ', 'hello ', 'brave ', 'new ', 'world']);
    const reply = await s.appClient.expect('reply');
    expect(reply).to.include({ event_id: eventId, thread_id: 'lesson-42', reply: 'You said: hello brave new world' });
    expect(reply.payload).to.deep.equal({ text: 'hello brave new world' });
    expect(reply.metadata).to.include({ model: 'echo', tokens_used: 6 });

    const sessionKey = `svc:${s.app.app_id}:lesson-42`;
    expect(s.notes).to.deep.equal([
      { type: 'connected', agentId: s.agent.agent_id },
      { type: 'event-received', agentId: s.agent.agent_id, eventId, sessionKey },
      { type: 'event-replied', agentId: s.agent.agent_id, eventId, tokenCount: 6 },
    ]);

    // The same thread reuses its session (the echo agent counts turns in session.data); the context is the agent's.
    await s.send({ text: 'again' });
    for (let i = 0; i < 3; i++) await s.appClient.expect('token');
    expect((await s.appClient.expect('reply')).reply).to.equal('You said: again');
    const session = s.connector.sessions(s.agent.agent_id).get(sessionKey)!;
    expect(session.data).to.deep.equal({ turns: 2 });
    expect(session.context).to.deep.equal({ persona: 'echo' });

    const health = await getHealth(s.connector.healthUrl!);
    expect(health.status).to.equal(200);
    expect(validateConnectorHealth(health.body), JSON.stringify(health.body)).to.equal(true);
    // The bridge's answer to the connector's first ping (its proof of acceptance) is the last pong so far.
    const connectedAt = new Date(s.clock.now()).toISOString();
    expect(health.body).to.deep.equal({
      status: 'ok',
      agents: { [s.agent.agent_id]: { connected: true, lastPing: connectedAt } },
    });

    expect(await s.connector.close()).to.deep.equal({ cutShort: [] });
    expect(s.notes.slice(-3).map((n) => n.type)).to.deep.equal(['disconnected', 'closed', 'stopped']);
    expect(s.notes.at(-3)).to.include({ agentId: s.agent.agent_id, code: 1000 });
    expect(s.connector.health()).to.deep.equal({
      status: 'down',
      agents: {
        [s.agent.agent_id]: {
          connected: false,
          lastPing: connectedAt,
          lastError: 'connection closed (1000 client closing)',
        },
      },
    });
  });

  it('pings on the heartbeat (through the clock) and shows the last pong as lastPing', async function () {
    const s = await setup(echo, { health: true });
    const connectedAt = s.connector.health().agents[s.agent.agent_id]!.lastPing;
    expect(connectedAt).to.equal(new Date(s.clock.now()).toISOString());
    s.clock.advance(LIMITS.heartbeatIntervalMs);
    const pingedAt = new Date(s.clock.now()).toISOString();
    await until(() => s.connector.health().agents[s.agent.agent_id]?.lastPing === pingedAt, 'the pong');
    expect((await getHealth(s.connector.healthUrl!)).body.agents[s.agent.agent_id]).to.deep.equal({
      connected: true,
      lastPing: pingedAt,
    });
    // The pong came in time: the pong deadline passing changes nothing.
    s.clock.advance(LIMITS.heartbeatTimeoutMs);
    await s.appClient.expectNothingBeforePong();
    expect(s.connector.isConnected(s.agent.agent_id)).to.equal(true);
  });

  describe('handler outcomes (never silent, §7)', function () {
    it('a handler that throws, or rejects, sends AGENT_ERROR with a generic text; the exception goes to the log only (C6)', async function () {
      const s = await setup((event) => {
        if (event.payload.mode === 'throw') throw new Error('model crashed: secret stack detail');
        return Promise.reject(new TypeError('async boom: key sk-0123'));
      });
      const generic = 'The agent failed while handling the event.';
      const first = await s.send({ mode: 'throw' });
      const firstError = await s.appClient.expect('error');
      expect(firstError).to.deep.include({ event_id: first, code: 'AGENT_ERROR', error: generic });
      const second = await s.send({ mode: 'reject' });
      const secondError = await s.appClient.expect('error');
      expect(secondError).to.deep.include({ event_id: second, code: 'AGENT_ERROR', error: generic });
      expect(JSON.stringify([firstError, secondError])).not.to.match(/secret|sk-0123/);
      expect(s.notes.filter((n) => n.type === 'event-error')).to.deep.equal([
        { type: 'event-error', agentId: s.agent.agent_id, eventId: first, code: 'AGENT_ERROR', message: generic },
        { type: 'event-error', agentId: s.agent.agent_id, eventId: second, code: 'AGENT_ERROR', message: generic },
      ]);
      expect(s.logs)
        .to.include('handler failed: model crashed: secret stack detail')
        .and.include('handler failed: async boom: key sk-0123');
    });

    it('ctx.fail passes the code to the bridge (AGENT_TIMEOUT stays AGENT_TIMEOUT, W9); an invalid code is sent as AGENT_ERROR', async function () {
      const s = await setup((event, ctx) => ctx.fail(event.payload.code as string, 'backend unavailable'));
      for (const [code, appCode] of [
        ['MODEL_DOWN', 'AGENT_ERROR'],
        ['AGENT_TIMEOUT', 'AGENT_TIMEOUT'],
        ['not a code', 'AGENT_ERROR'],
      ]) {
        const eventId = await s.send({ code });
        expect(await s.appClient.expect('error')).to.deep.include({
          event_id: eventId,
          code: appCode,
          error: 'backend unavailable',
        });
      }
      expect(s.logs.some((l) => l.startsWith('invalid error code, sent as AGENT_ERROR'))).to.equal(true);
    });

    it('a handler that returns without replying: the streamed tokens are replied (empty content), or AGENT_ERROR when it streamed nothing', async function () {
      const s = await setup(async (event, ctx) => {
        if (event.payload.stream) ctx.stream('streamed but never replied', 2);
      });
      const streamed = await s.send({ stream: true });
      expect((await s.appClient.expect('token')).token).to.equal('streamed but ');
      expect((await s.appClient.expect('token')).token).to.equal('never replied');
      expect(await s.appClient.expect('reply')).to.include({ event_id: streamed, reply: 'streamed but never replied' });
      expect(s.notes.at(-1)).to.deep.equal({
        type: 'event-replied',
        agentId: s.agent.agent_id,
        eventId: streamed,
        tokenCount: 2,
      });

      const silent = await s.send({ stream: false });
      expect(await s.appClient.expect('error')).to.deep.include({
        event_id: silent,
        code: 'AGENT_ERROR',
        error: 'The agent handler returned without a reply.',
      });
    });

    it('a handler that never answers gets AGENT_TIMEOUT at the handler timeout (on the clock); its later calls are ignored', async function () {
      let held: AgentContext | undefined;
      const s = await setup(
        (_event, ctx) => {
          held = ctx;
          return new Promise(() => {}); // never settles
        },
        { handlerTimeoutMs: 10_000 },
      );
      const eventId = await s.send();
      await until(() => held !== undefined, 'the handler');
      s.clock.advance(9_999);
      await s.appClient.expectNothingBeforePong();
      expect(held!.finished).to.equal(false);
      s.clock.advance(1);
      expect(await s.appClient.expect('error')).to.deep.include({
        event_id: eventId,
        code: 'AGENT_TIMEOUT',
        error: 'The agent did not answer within 10000 ms.',
      });
      expect(held!.finished).to.equal(true);
      expect(held!.signal.aborted).to.equal(true);

      expect(held!.token('too late')).to.equal(0);
      held!.reply('too late');
      held!.fail('AGENT_ERROR', 'too late');
      await s.appClient.expectNothingBeforePong();
      expect(s.logs).to.include.members([
        'ctx.token() after the event ended: ignored',
        'ctx.reply() after the event ended: ignored',
        'ctx.fail() after the event ended: ignored',
      ]);
      expect(s.notes.map((n) => n.type)).to.deep.equal(['connected', 'event-received', 'event-error']);
      expect(s.connector.inFlight(s.agent.agent_id)).to.equal(0);
    });

    it('the default handler timeout is the bridge timeout minus 5 s', async function () {
      let held: AgentContext | undefined;
      const s = await setup(
        (_e, ctx) => {
          held = ctx;
          return new Promise(() => {});
        },
        { connection: { heartbeatIntervalMs: DAY } },
      );
      await s.send();
      await until(() => held !== undefined, 'the handler');
      s.clock.advance(LIMITS.agentTimeoutMs - 5_001);
      expect(held!.finished).to.equal(false);
      s.clock.advance(1);
      expect(await s.appClient.expect('error')).to.include({ code: 'AGENT_TIMEOUT' });
    });

    it('splits a token over the 4096-byte limit without cutting a character; the bridge refuses none', async function () {
      const text = 'a' + '😀'.repeat(2000) + ' € ' + 'é'.repeat(3000);
      const s = await setup((_e, ctx) => {
        ctx.token(text);
        ctx.reply();
      });
      await s.send();
      const tokens: string[] = [];
      for (;;) {
        const message = await s.appClient.waitForMessage();
        if (message.type === 'reply') {
          expect(message.reply).to.equal(text);
          break;
        }
        expect(message.type).to.equal('token');
        if (message.type === 'token') tokens.push(message.token);
      }
      expect(tokens.join('')).to.equal(text);
      for (const token of tokens) {
        expect(Buffer.byteLength(token)).to.be.at.most(LIMITS.tokenFragmentMaxBytes);
        expect(Buffer.from(token).toString()).to.equal(token);
      }
      expect(s.notes.filter((n) => n.type === 'event-error')).to.deep.equal([]);
    });
    it('a reply whose text is over replyContentMaxBytes ends the event with AGENT_ERROR saying so; one at the limit is delivered (L16)', async function () {
      const s = await setup((event, ctx) => ctx.reply('r'.repeat(event.payload.bytes as number)));
      const atLimit = await s.send({ bytes: LIMITS.replyContentMaxBytes });
      const reply = await s.appClient.expect('reply');
      expect(reply.event_id).to.equal(atLimit);
      expect(reply.reply).to.have.length(LIMITS.replyContentMaxBytes);
      const over = await s.send({ bytes: LIMITS.replyContentMaxBytes + 1 });
      const error = await s.appClient.expect('error');
      expect(error).to.include({ event_id: over, code: 'AGENT_ERROR' });
      expect(error.error)
        .to.include(`${LIMITS.replyContentMaxBytes + 1} bytes`)
        .and.include(String(LIMITS.replyContentMaxBytes));
      await s.appClient.expectNothingBeforePong(); // no tokens were streamed for it, and the connection stays up
      expect(s.connector.isConnected(s.agent.agent_id)).to.equal(true);
    });
  });

  it('surfaces INVALID_EVENT_ID from the bridge as event-error, stops that event, and keeps serving', async function () {
    const gate = deferred();
    const done = deferred();
    const s = await setup(
      async (event: AgentEvent, ctx) => {
        if (event.payload.quick) return ctx.reply('quick answer');
        await gate.promise;
        ctx.token('late');
        if (!ctx.signal.aborted) await once(ctx.signal, 'abort');
        ctx.reply('never sent');
        done.resolve();
      },
      { bridgeConfig: { agentTimeoutMs: 1_000 } },
    );
    const eventId = await s.send();
    await until(() => s.notes.some((n) => n.type === 'event-received'), 'the event');
    s.bridge.clock.advance(1_000); // the bridge gives up on the event
    expect(await s.appClient.expect('error')).to.include({ event_id: eventId, code: 'AGENT_TIMEOUT' });

    gate.resolve();
    await done.promise;
    expect(s.notes.find((n) => n.type === 'event-error')).to.deep.include({
      agentId: s.agent.agent_id,
      eventId,
      code: 'INVALID_EVENT_ID',
    });
    expect(s.notes.some((n) => n.type === 'event-replied')).to.equal(false);
    expect(s.logs).to.include('ctx.reply() after the event ended: ignored');

    await s.send({ quick: true });
    expect((await s.appClient.expect('reply')).reply).to.equal('quick answer');
    expect(s.connector.isConnected(s.agent.agent_id)).to.equal(true);
  });

  it('reconnects with backoff after a drop, and an event in flight finishes on the new connection (L8)', async function () {
    const gate = deferred();
    const s = await setup(async (_e, ctx) => {
      ctx.token('before ');
      await gate.promise;
      ctx.token('after');
      ctx.reply();
    });
    const eventId = await s.send();
    expect((await s.appClient.expect('token')).token).to.equal('before ');

    s.sockets[0]!.terminate();
    await until(() => s.notes.some((n) => n.type === 'reconnecting'), 'reconnecting');
    gate.resolve(); // answers while disconnected: kept until the connection is back
    await until(() => !s.connector.inFlight(s.agent.agent_id), 'the handler');
    await s.appClient.expectNothingBeforePong();

    s.clock.advance(LIMITS.reconnectBaseDelayMs - 1);
    expect(s.sockets).to.have.length(1);
    s.clock.advance(1);
    expect(s.sockets).to.have.length(2);
    expect((await s.appClient.expect('token')).token).to.equal('after');
    expect(await s.appClient.expect('reply')).to.include({ event_id: eventId, reply: 'before after' });

    expect(s.notes.map((n) => n.type)).to.deep.equal([
      'connected',
      'event-received',
      'disconnected',
      'reconnecting',
      'event-replied',
      'connected',
    ]);
    expect(s.notes[2]).to.deep.equal({ type: 'disconnected', agentId: s.agent.agent_id, code: 1006, reason: '' });
    expect(s.notes[3]).to.deep.equal({
      type: 'reconnecting',
      agentId: s.agent.agent_id,
      attempt: 1,
      delayMs: LIMITS.reconnectBaseDelayMs,
    });
  });

  it("reconnects after an operator's disconnect (DISCONNECTED_BY_ADMIN, 4205), and an event in flight finishes on the new connection (H8)", async function () {
    const gate = deferred();
    const s = await setup(async (_e, ctx) => {
      ctx.token('before ');
      await gate.promise;
      ctx.token('after');
      ctx.reply();
    });
    const eventId = await s.send();
    expect((await s.appClient.expect('token')).token).to.equal('before ');
    const live = await s.bridge.http('GET', `/admin/v1/organizations/${s.agent.org_id}/live`);
    const { connection_id } = live.body.agents[0].connection;

    expect((await s.bridge.http('DELETE', `/admin/v1/connections/${connection_id}`)).status).to.equal(200);
    await until(() => s.notes.some((n) => n.type === 'reconnecting'), 'reconnecting');
    expect(s.notes.find((n) => n.type === 'disconnected')).to.deep.equal({
      type: 'disconnected',
      agentId: s.agent.agent_id,
      code: CLOSE_CODES.DISCONNECTED_BY_ADMIN,
      reason: 'DISCONNECTED_BY_ADMIN',
    });
    gate.resolve();
    await until(() => !s.connector.inFlight(s.agent.agent_id), 'the handler');
    s.clock.advance(LIMITS.reconnectBaseDelayMs);
    expect((await s.appClient.expect('token')).token).to.equal('after');
    expect(await s.appClient.expect('reply')).to.include({ event_id: eventId, reply: 'before after' });
    expect(s.connector.isConnected(s.agent.agent_id)).to.equal(true);
    expect(s.notes.map((n) => n.type).slice(-2)).to.deep.equal(['event-replied', 'connected']);
  });

  it('gives up after the default 5 reconnect attempts (1, 2, 4, 8, 16 s), ending the events in flight', async function () {
    let opened = 0;
    const s = await setup(() => new Promise(() => {}), {
      connection: {
        random: () => 0,
        // The first connection reaches the bridge; every reconnect finds nothing listening.
        createSocket: (url, headers) =>
          new WebSocket(opened++ === 0 ? url : 'ws://127.0.0.1:1/v1/ws/agent', { headers, perMessageDeflate: false }),
      },
    });
    expect(s.connector.config.connection.reconnect.maxRetries).to.equal(LIMITS.connectorReconnectMaxAttempts);
    const eventId = await s.send();
    await until(() => s.connector.inFlight(s.agent.agent_id) === 1, 'the handler');
    await s.bridge.close(); // drops the connection (1001)
    for (let attempt = 1; attempt <= LIMITS.connectorReconnectMaxAttempts; attempt++) {
      await until(() => s.notes.some((n) => n.type === 'reconnecting' && n.attempt === attempt), `attempt ${attempt}`);
      s.clock.advance(LIMITS.reconnectBaseDelayMs * 2 ** (attempt - 1));
    }
    await until(() => s.notes.some((n) => n.type === 'closed'), 'giving up');
    expect(s.notes.map((n) => n.type)).to.deep.equal([
      'connected',
      'event-received',
      'disconnected',
      ...Array(LIMITS.connectorReconnectMaxAttempts).fill('reconnecting'),
      'event-error',
      'closed',
    ]);
    expect(s.notes.filter((n) => n.type === 'reconnecting').map((n) => n.delayMs)).to.deep.equal([
      1000, 2000, 4000, 8000, 16000,
    ]);
    expect(s.notes.at(-2)).to.include({ eventId, code: 'AGENT_OFFLINE' });
    expect(s.connector.inFlight(s.agent.agent_id)).to.equal(0);
    expect(s.connector.health()).to.deep.include({ status: 'down' });
  });

  it('recreates a session after ttl_days on its clock', async function () {
    const seen: { newSession: boolean; createdAt: number }[] = [];
    const s = await setup(
      (event, ctx) => {
        seen.push({ newSession: event.newSession, createdAt: event.session.createdAt.getTime() });
        ctx.reply('ok');
      },
      { connection: { heartbeatIntervalMs: 100 * DAY } }, // so that days can pass on the frozen clock without a heartbeat
    );
    const start = s.clock.now();
    await s.send();
    await s.appClient.expect('reply');
    s.clock.advance(LIMITS.sessionTtlDefaultDays * DAY - 1);
    await s.send();
    await s.appClient.expect('reply');
    s.clock.advance(1);
    await s.send();
    await s.appClient.expect('reply');
    expect(seen).to.deep.equal([
      { newSession: true, createdAt: start },
      { newSession: false, createdAt: start },
      { newSession: true, createdAt: start + LIMITS.sessionTtlDefaultDays * DAY },
    ]);
  });

  it('on close, ends every event in flight with an error before closing the connection', async function () {
    const s = await setup(() => new Promise(() => {}));
    const eventId = await s.send();
    await until(() => s.connector.inFlight(s.agent.agent_id) === 1, 'the handler');
    expect(await s.connector.close()).to.deep.equal({ cutShort: [{ agentId: s.agent.agent_id, eventId }] });
    expect(await s.appClient.expect('error')).to.deep.include({
      event_id: eventId,
      code: 'AGENT_ERROR',
      error: 'The agent connector is shutting down.',
    });
  });

  it('a refused agent fails start() with the bridge error, and health shows it down with lastError', async function () {
    const s = await setup(echo, {
      health: true,
      start: false,
      token: (agent) => `rla_${agent.agent_id}_${'x'.repeat(40)}`,
    });
    let error: Error | undefined;
    await s.connector.start().catch((err: Error) => (error = err));
    expect(error).to.be.instanceOf(ConnectorStartError);
    expect(error!.message).to.match(new RegExp(`^could not connect ${s.agent.agent_id}: UNAUTHORIZED: `));
    const health = s.connector.health();
    expect(validateConnectorHealth(health)).to.equal(true);
    expect(health.status).to.equal('down');
    expect(health.agents[s.agent.agent_id]!.lastError).to.match(/^UNAUTHORIZED: /);
    expect(s.notes.map((n) => n.type)).to.deep.equal(['event-error', 'closed']);
    expect(s.notes[0]).to.include({ code: 'UNAUTHORIZED' }).and.not.have.property('eventId');
    expect(s.notes[1]).to.include({ code: 4401, reason: 'UNAUTHORIZED' });
  });

  it('serves the health endpoint: 503 while down, 404 elsewhere, 405 for other methods', async function () {
    const s = await setup(echo, { health: true });
    const url = s.connector.healthUrl!;
    expect((await fetch(url.replace('/health', '/other'))).status).to.equal(404);
    const post = await fetch(url, { method: 'POST' });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('GET, HEAD');
    s.sockets[0]!.terminate();
    await until(() => !s.connector.isConnected(s.agent.agent_id), 'the drop');
    const down = await getHealth(url);
    expect(down.status).to.equal(503);
    expect(down.body.agents[s.agent.agent_id]).to.include({ connected: false, lastError: 'connection closed (1006)' });
    expect(down.body.status).to.equal('down');
  });
});
