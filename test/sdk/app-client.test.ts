// The app client without a network: a fake socket stands in for the bridge (through ConnectionOptions'
// createSocket) and a frozen AdjustableClock drives the heartbeat and the backoff, so every step is explicit.
import { expect } from 'chai';
import WebSocket from 'ws';
import { CLOSE_CODES, LIMITS, type AgentSummary } from '../../generated/index.js';
import type { AdjustableClock } from '../../src/shared/clock.js';
import { ConnectionLostError, type AppClient } from '../../src/sdk/app-client.js';
import type { FakeSocket } from '../helpers/fake-socket.js';
import { rejection } from '../helpers/rejection.js';
import {
  AGENT,
  APP,
  TOKEN,
  accepted,
  closeClients,
  collect,
  collectUntilError,
  connected,
  error,
  eventId,
  frame,
  harness,
  record,
  reply,
  settled,
  token,
} from '../helpers/app-client-harness.js';

describe('app client (unit)', function () {
  afterEach(closeClients);

  describe('connecting', function () {
    it('opens {url}/ws/app with the token in the Authorization header by default', async function () {
      const { socket } = await connected({ url: 'wss://bridge.test/v1/' });
      expect(socket.url).to.equal('wss://bridge.test/v1/ws/app?resume=1');
      expect(socket.headers).to.deep.equal({ authorization: `Bearer ${TOKEN}` });
    });

    it("puts the token in ?token= with carrier: 'query'", async function () {
      const { socket } = await connected({ carrier: 'query' });
      const url = new URL(socket.url);
      expect(url.pathname).to.equal('/v1/ws/app');
      expect(url.searchParams.get('token')).to.equal(TOKEN);
      expect(socket.headers).to.deep.equal({});
    });

    it('resolves only once a pong proves the token was accepted, not on the open socket', async function () {
      const h = harness();
      const pending = h.connect();
      h.last().open();
      expect(h.last().sentOfType('ping'), 'a ping right after the open').to.have.length(1);
      expect(await settled(pending)).to.equal('pending');
      h.last().receive({ type: 'pong' });
      await pending;
    });

    for (const code of ['UNAUTHORIZED', 'TOKEN_REVOKED', 'FORBIDDEN'] as const) {
      it(`rejects with BridgeError ${code} when the handshake is refused, and does not retry`, async function () {
        const h = harness();
        const pending = h.connect();
        h.last().refuse(code, `refused: ${code}`);
        const err = await rejection(pending);
        expect(err.code).to.equal(code);
        expect(err.message).to.equal(`refused: ${code}`);
        expect(err.closeCode).to.equal(CLOSE_CODES[code]);
        expect(err).to.not.be.instanceOf(ConnectionLostError);
        h.clock.advance(LIMITS.reconnectMaxDelayMs * 10);
        expect(h.sockets).to.have.length(1);
      });
    }

    it('rejects with ConnectionLostError when the bridge cannot be reached and reconnecting is off', async function () {
      const h = harness({ reconnect: { enabled: false } });
      const pending = h.connect();
      h.last().drop(1006);
      const err = await rejection(pending);
      expect(err).to.be.instanceOf(ConnectionLostError);
      expect(err.code).to.equal('CONNECTION_LOST');
      expect(err.closeCode).to.equal(1006);
    });
  });

  describe('pairing answers with sends', function () {
    it('sends the event frame and pairs answers by order: the first send gets the error, the second the accepted', async function () {
      const { client, socket } = await connected();
      const first = client.send({ agentId: 'Bad_Id', threadId: 't', payload: { n: 1 } });
      const second = client.send({ agentId: AGENT, threadId: 't', payload: { n: 2 } });
      expect(socket.sentOfType('event')).to.deep.equal([
        { type: 'event', agent_id: 'Bad_Id', thread_id: 't', payload: { n: 1 } },
        { type: 'event', agent_id: AGENT, thread_id: 't', payload: { n: 2 } },
      ]);

      // The rejection carries an event_id the client has never seen (W6): it belongs to the oldest send.
      socket.receive(error(eventId(1), 'INVALID_AGENT_ID'));
      socket.receive(accepted(eventId(2)));

      const err = await rejection(first.accepted);
      expect(err).to.include({
        code: 'INVALID_AGENT_ID',
        eventId: eventId(1),
        message: 'bridge says INVALID_AGENT_ID',
      });
      expect((await rejection(first.reply)).code).to.equal('INVALID_AGENT_ID');
      expect(await second.accepted).to.deep.equal({ event_id: eventId(2), session_key: `svc:${AGENT}:${APP}:t` });
      expect(await settled(second.reply)).to.equal('pending');
    });

    it('routes an error with a known event_id to that event, not to the send waiting for its answer', async function () {
      const { client, socket } = await connected();
      const first = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      socket.receive(accepted(eventId(1)));
      const second = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      socket.receive(error(eventId(1), 'AGENT_TIMEOUT', { agent_id: AGENT }));
      socket.receive(accepted(eventId(2)));
      expect((await rejection(first.reply)).code).to.equal('AGENT_TIMEOUT');
      expect((await second.accepted).event_id).to.equal(eventId(2));
    });

    it('answers discovers in order', async function () {
      const { client, socket } = await connected();
      const a = client.discover();
      const b = client.discover();
      expect(socket.sentOfType('discover')).to.have.length(2);
      const one: AgentSummary[] = [{ agent_id: 'a', name: 'A', description: '' }];
      const two: AgentSummary[] = [{ agent_id: 'b', name: 'B', description: 'second' }];
      socket.receive(frame({ type: 'agents', agents: one }));
      socket.receive(frame({ type: 'agents', agents: two, incomplete: true }));
      expect(await a).to.deep.equal(one);
      expect(await b).to.deep.equal(two);
      expect([(await a).incomplete, (await b).incomplete], 'a list the bridge cut says so (W13)').to.deep.equal([
        false,
        true,
      ]);
    });

    it("rejects a discover refused for its organization's share (TOO_MANY_REQUESTS) with the code and the time to wait, keeping the next paired", async function () {
      const { client, socket } = await connected();
      const refused = client.discover();
      const next = client.discover();
      socket.receive(error(undefined, 'TOO_MANY_REQUESTS', { metadata: { retry_after_seconds: 0.25 } }));
      socket.receive(frame({ type: 'agents', agents: [] }));
      expect(await rejection(refused)).to.include({ code: 'TOO_MANY_REQUESTS', retryAfterSeconds: 0.25 });
      expect(await next).to.deep.equal([]);
    });

    it('fails the answered send with PROTOCOL_ERROR on an off-spec answer, keeping later answers paired', async function () {
      const { client, socket } = await connected();
      const first = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      const second = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      socket.receive({ type: 'accepted', event_id: eventId(1) }); // no session_key, agent_id, status
      socket.receive(accepted(eventId(2)));
      expect((await rejection(first.accepted)).code).to.equal('PROTOCOL_ERROR');
      expect((await second.accepted).event_id).to.equal(eventId(2));
    });

    it('refuses a frame over frameMaxBytes locally with PAYLOAD_TOO_LARGE, since the bridge would close the connection', async function () {
      const { client, socket } = await connected();
      const handle = client.send({
        agentId: AGENT,
        threadId: 't',
        payload: { text: 'x'.repeat(LIMITS.frameMaxBytes) },
      });
      const err = await rejection(handle.reply);
      expect(err.code).to.equal('PAYLOAD_TOO_LARGE');
      expect(err.eventId).to.equal(undefined);
      expect(socket.sentOfType('event')).to.have.length(0);
      expect(client.state).to.equal('open');
    });
  });

  describe('tokens and the reply', function () {
    it('streams the fragments in order as they arrive and ends at the reply, ignoring other events', async function () {
      const { client, socket } = await connected();
      const a = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      const b = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      socket.receive(accepted(eventId(1)));
      socket.receive(accepted(eventId(2)));

      const stream = a.tokens[Symbol.asyncIterator]();
      const firstNext = stream.next();
      expect(await settled(firstNext), 'nothing before the first fragment').to.equal('pending');
      socket.receive(token(eventId(1), 'Hel'));
      expect(await firstNext).to.deep.equal({ value: 'Hel', done: false });

      const rest = collect({ [Symbol.asyncIterator]: () => stream });
      socket.receive(token(eventId(2), 'other'));
      socket.receive(token(eventId(1), 'lo'));
      socket.receive(token(eventId(1), '!'));
      expect(await settled(rest), 'open until the reply').to.equal('pending');
      socket.receive(reply(eventId(1), 'Hello!'));

      expect(await rest).to.deep.equal(['lo', '!']);
      expect(await collect(a.tokens), 'a late reader gets every fragment').to.deep.equal(['Hel', 'lo', '!']);
      expect((await a.reply).reply).to.equal('Hello!');
      expect(await a.text()).to.equal('Hello!');
      expect(await settled(b.reply)).to.equal('pending');
    });

    it('rejects with the code and retryAfterSeconds of RATE_LIMIT_EXCEEDED', async function () {
      const { client, socket } = await connected();
      const handle = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      socket.receive(
        error(eventId(7), 'RATE_LIMIT_EXCEEDED', { agent_id: AGENT, metadata: { retry_after_seconds: 0.05 } }),
      );
      for (const promise of [handle.accepted, handle.reply, handle.text()]) {
        const err = await rejection(promise);
        expect(err).to.include({
          code: 'RATE_LIMIT_EXCEEDED',
          eventId: eventId(7),
          agentId: AGENT,
          retryAfterSeconds: 0.05,
        });
      }
      const { got, error: streamError } = await collectUntilError(handle.tokens);
      expect(got).to.deep.equal([]);
      expect(streamError.code).to.equal('RATE_LIMIT_EXCEEDED');
    });

    it("ends an accepted event with the agent's error: fragments so far, then the error from the stream and the reply", async function () {
      const { client, socket } = await connected();
      const handle = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      socket.receive(accepted(eventId(3)));
      socket.receive(token(eventId(3), 'partial'));
      socket.receive(error(eventId(3), 'AGENT_ERROR', { agent_id: AGENT }));
      const err = await rejection(handle.reply);
      expect(err).to.include({ code: 'AGENT_ERROR', eventId: eventId(3), message: 'bridge says AGENT_ERROR' });
      expect(err.retryAfterSeconds).to.equal(undefined);
      expect((await handle.accepted).event_id).to.equal(eventId(3));
      const { got, error: streamError } = await collectUntilError(handle.tokens);
      expect(got).to.deep.equal(['partial']);
      expect(streamError).to.equal(err);
    });

    it('never turns an ignored failure into an unhandled rejection', async function () {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const { client, socket } = await connected();
        client.send({ agentId: AGENT, threadId: 't', payload: {} }); // refused
        client.send({ agentId: AGENT, threadId: 't', payload: {} }); // accepted, then lost
        socket.receive(error(eventId(1), 'AGENT_NOT_FOUND'));
        socket.receive(accepted(eventId(2)));
        socket.drop(1006);
        client.send({ agentId: AGENT, threadId: 't', payload: {} }); // while disconnected
        for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve)); // let Node report
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
      expect(unhandled).to.deep.equal([]);
    });
  });

  describe('losing the connection', function () {
    it('ends every call in flight with ConnectionLostError, refuses sends until reconnected, then pairs afresh', async function () {
      const { client, socket, clock, sockets } = await connected();
      const seen = record(client);
      const streaming = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      socket.receive(accepted(eventId(1)));
      socket.receive(token(eventId(1), 'half'));
      const unanswered = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      const discovering = client.discover();

      socket.receive(error(undefined, 'HEARTBEAT_TIMEOUT'));
      socket.drop(CLOSE_CODES.HEARTBEAT_TIMEOUT, 'HEARTBEAT_TIMEOUT');

      for (const promise of [streaming.reply, unanswered.accepted, unanswered.reply, discovering]) {
        const err = await rejection(promise);
        expect(err).to.be.instanceOf(ConnectionLostError);
        expect(err).to.include({
          code: 'CONNECTION_LOST',
          closeCode: CLOSE_CODES.HEARTBEAT_TIMEOUT,
          reason: 'HEARTBEAT_TIMEOUT',
        });
        expect(err.message).to.contain('HEARTBEAT_TIMEOUT');
      }
      const { got, error: streamError } = await collectUntilError(streaming.tokens);
      expect(got).to.deep.equal(['half']);
      expect(streamError.code).to.equal('CONNECTION_LOST');
      expect(seen).to.deep.include.members([
        ['disconnected', { code: CLOSE_CODES.HEARTBEAT_TIMEOUT, reason: 'HEARTBEAT_TIMEOUT' }],
        ['reconnecting', { attempt: 1, delayMs: LIMITS.reconnectBaseDelayMs }],
      ]);
      expect(client.state).to.equal('reconnecting');

      const offline = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      expect(await settled(offline.accepted), 'rejected at once').to.equal('rejected');
      expect(await rejection(offline.reply)).to.be.instanceOf(ConnectionLostError);
      expect((await rejection(client.discover())).code).to.equal('CONNECTION_LOST');

      clock.advance(LIMITS.reconnectBaseDelayMs);
      expect(sockets).to.have.length(2);
      const fresh = sockets[1]!;
      fresh.open();
      fresh.receive({ type: 'pong' });
      expect(seen.filter(([name]) => name === 'connected')).to.have.length(1);

      // Answers that belonged to the old connection never reach it; the first answer here is the new send's.
      const next = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      fresh.receive(accepted(eventId(9)));
      expect((await next.accepted).event_id).to.equal(eventId(9));
      expect(socket.sentOfType('event')).to.have.length(2);
      expect(fresh.sentOfType('event')).to.have.length(1);
    });

    it('closes for good on close(): calls in flight fail, "closed" is emitted, nothing reconnects', async function () {
      const { client, socket, clock, sockets } = await connected();
      const seen = record(client);
      const handle = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      await client.close();
      const err = await rejection(handle.reply);
      expect(err).to.be.instanceOf(ConnectionLostError);
      expect(err.message).to.match(/^The client was closed/);
      expect(seen.at(-1)).to.deep.equal(['closed', { code: 1000, reason: 'client closing' }]);
      expect(socket.readyState).to.equal(WebSocket.CLOSED);
      clock.advance(LIMITS.reconnectMaxDelayMs * 10);
      expect(sockets).to.have.length(1);
      const after = await rejection(client.send({ agentId: AGENT, threadId: 't', payload: {} }).reply);
      expect(after.message).to.contain('closed');
    });
  });

  describe('reconnect backoff', function () {
    /** Fails every reconnect attempt at once; returns the reported delays once the client gives up. */
    function failEveryAttempt(h: { clock: AdjustableClock; sockets: FakeSocket[] }, client: AppClient, max = 50) {
      const delays: number[] = [];
      let closed: { code: number; reason: string } | undefined;
      client.on('closed', (info) => (closed = info));
      client.on('reconnecting', ({ delayMs }) => delays.push(delayMs));
      h.sockets.at(-1)!.drop(1006);
      while (!closed && delays.length <= max) {
        const before = h.sockets.length;
        const delay = delays.at(-1)!;
        h.clock.advance(delay - 1);
        expect(h.sockets.length, `no attempt 1 ms before ${delay} ms`).to.equal(before);
        h.clock.advance(1);
        expect(h.sockets.length, `an attempt after ${delay} ms`).to.equal(before + 1);
        h.sockets.at(-1)!.drop(1006);
      }
      return { delays, closed };
    }

    it('reconnects after 1 s, 2 s, 4 s … capped at 60 s, and gives up after appReconnectMaxAttempts', async function () {
      const h = await connected({ random: () => 0 });
      const { delays, closed } = failEveryAttempt(h, h.client);
      const expected: number[] = [];
      for (let i = 0; i < LIMITS.appReconnectMaxAttempts; i++)
        expected.push(Math.min(LIMITS.reconnectMaxDelayMs, LIMITS.reconnectBaseDelayMs * 2 ** i));
      expect(expected.slice(0, 7)).to.deep.equal([1000, 2000, 4000, 8000, 16000, 32000, 60000]);
      expect(delays).to.deep.equal(expected);
      expect(closed).to.deep.equal({ code: 1006, reason: '' });
      expect(h.client.state).to.equal('closed');
      h.clock.advance(LIMITS.reconnectMaxDelayMs * 10);
      expect(h.sockets).to.have.length(1 + LIMITS.appReconnectMaxAttempts);
      expect((await rejection(h.client.send({ agentId: AGENT, threadId: 't', payload: {} }).reply)).code).to.equal(
        'CONNECTION_LOST',
      );
    });

    it('takes up to the jitter fraction off each delay, and honours the reconnect options', async function () {
      const h = await connected({
        random: () => 0.5,
        reconnect: { maxRetries: 3, baseDelayMs: 500, maxDelayMs: 1500, jitter: 0.5 },
      });
      const { delays, closed } = failEveryAttempt(h, h.client);
      expect(delays).to.deep.equal([375, 750, 1125]);
      expect(closed).to.not.equal(undefined);
    });

    it('applies the default jitter of BridgeConnection', async function () {
      const h = await connected({ random: () => 0.5 });
      const delays: number[] = [];
      h.client.on('reconnecting', ({ delayMs }) => delays.push(delayMs));
      h.socket.drop(1006);
      expect(delays).to.deep.equal([900]); // 1000 - 20 % * 0.5
    });

    it('starts again from 1 s after a successful reconnect', async function () {
      const h = await connected();
      const delays: number[] = [];
      h.client.on('reconnecting', ({ delayMs }) => delays.push(delayMs));
      h.socket.drop(1006);
      h.clock.advance(1000);
      h.last().drop(1006);
      h.clock.advance(2000);
      h.last().open();
      h.last().receive({ type: 'pong' });
      h.last().drop(1006);
      expect(delays).to.deep.equal([1000, 2000, 1000]);
    });
  });

  describe('heartbeat', function () {
    it('pings every 30 s and reconnects when no pong comes within 5 s (the defaults)', async function () {
      const { client, socket, clock, sockets } = await connected();
      const seen = record(client);
      const pings = () => socket.sentOfType('ping').length;
      expect(pings(), 'the confirmation ping').to.equal(1);

      clock.advance(LIMITS.heartbeatIntervalMs - 1);
      expect(pings()).to.equal(1);
      clock.advance(1);
      expect(pings()).to.equal(2);
      socket.receive({ type: 'pong' });
      clock.advance(LIMITS.heartbeatTimeoutMs);
      expect(socket.readyState, 'a pong in time keeps it').to.equal(WebSocket.OPEN);

      const handle = client.send({ agentId: AGENT, threadId: 't', payload: {} });
      clock.advance(LIMITS.heartbeatIntervalMs - LIMITS.heartbeatTimeoutMs);
      expect(pings()).to.equal(3);
      clock.advance(LIMITS.heartbeatTimeoutMs - 1);
      expect(socket.readyState).to.equal(WebSocket.OPEN);
      clock.advance(1);
      expect(socket.readyState, 'dropped without a pong').to.equal(WebSocket.CLOSED);
      expect(seen).to.deep.include.members([
        ['disconnected', { code: 1006, reason: '' }],
        ['reconnecting', { attempt: 1, delayMs: LIMITS.reconnectBaseDelayMs }],
      ]);
      expect((await rejection(handle.reply)).code).to.equal('CONNECTION_LOST');
      clock.advance(LIMITS.reconnectBaseDelayMs);
      expect(sockets).to.have.length(2);
    });

    it('passes heartbeatIntervalMs and heartbeatTimeoutMs through to the connection', async function () {
      const { client, socket, clock } = await connected({ heartbeatIntervalMs: 10_000, heartbeatTimeoutMs: 2_000 });
      const seen = record(client);
      clock.advance(9_999);
      expect(socket.sentOfType('ping')).to.have.length(1);
      clock.advance(1);
      expect(socket.sentOfType('ping')).to.have.length(2);
      clock.advance(1_999);
      expect(socket.readyState).to.equal(WebSocket.OPEN);
      clock.advance(1);
      expect(socket.readyState).to.equal(WebSocket.CLOSED);
      expect(seen.map(([name]) => name)).to.include.members(['disconnected', 'reconnecting']);
    });
  });
});
