// The client connection state machine both SDK clients share, driven by a fake socket and a frozen clock: when it
// calls the connection accepted, what it keeps of a refusal, and how frames reach its owner. Shown here on the
// agent endpoint; the app client's tests cover the app endpoint through connectApp.
import { expect } from 'chai';
import type WebSocket from 'ws';
import {
  CLOSE_CODES,
  LIMITS,
  validateOpenServiceToAgentMessage,
  type AgentToServiceMessage,
  type ServiceToAgentMessage,
} from '../../generated/index.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { BridgeConnection, BridgeConnectionError } from '../../src/sdk/connection.js';
import { backoffDelay } from '../../src/sdk/connection-options.js';
import { FakeSocket } from '../helpers/fake-socket.js';

function harness(maxRetries = 3) {
  const clock = new AdjustableClock({ frozen: true, start: Date.parse('2026-11-22T12:00:00.000Z') });
  const sockets: FakeSocket[] = [];
  const connection = new BridgeConnection<ServiceToAgentMessage, AgentToServiceMessage>(
    {
      url: 'wss://bridge.test/v1/ws/agent',
      token: `rla_tutor_${'x'.repeat(40)}`,
      clock,
      random: () => 0,
      createSocket: (url, headers) => {
        sockets.push(new FakeSocket(url, headers));
        return sockets.at(-1) as unknown as WebSocket;
      },
    },
    { validate: validateOpenServiceToAgentMessage, maxRetries },
  );
  const seen: [string, ...unknown[]][] = [];
  const attempts: number[] = [];
  const delays: number[] = [];
  connection.on('reconnecting', ({ attempt, delayMs }) => {
    attempts.push(attempt);
    delays.push(delayMs);
  });
  for (const name of ['ready', 'message', 'invalid', 'down', 'closed'] as const)
    connection.on(name, (...args: unknown[]) => seen.push([name, ...args]));
  return { clock, sockets, connection, seen, attempts, delays, last: () => sockets.at(-1)! };
}

const EVENT = {
  type: 'event',
  event_id: 'e1',
  app_id: 'app-one',
  agent_id: 'tutor',
  thread_id: 't',
  session_key: 'svc:tutor:app-one:t',
  payload: {},
};

describe('client connection', function () {
  it('is ready, and start() resolves, only once the first ping is answered, not on the open socket', async function () {
    const h = harness();
    let started = false;
    const start = h.connection.start().then(() => (started = true));
    h.last().open();
    expect(h.last().sentOfType('ping')).to.have.length(1);
    await Promise.resolve();
    expect([h.connection.ready, started]).to.deep.equal([false, false]);
    h.last().receive({ type: 'pong' });
    await start;
    expect(h.connection.ready).to.equal(true);
    expect(h.seen).to.deep.equal([['ready']]);
    h.connection.close();
  });

  it('hands over frames of the endpoint union, typed, and reports frames off its schema with the problem', function () {
    const h = harness();
    void h.connection.start().catch(() => {});
    h.last().open();
    h.last().receive({ type: 'pong' });
    h.last().receive({ ...EVENT, from_a_later_version: true });
    h.last().receive({ type: 'event', event_id: 'e2' });
    h.last().receive({ type: 'accepted', event_id: 'e3' });
    h.last().receive({ type: 'pong' });
    expect(h.seen.map(([name]) => name)).to.deep.equal(['ready', 'message', 'invalid', 'invalid']);
    expect(h.seen[2]).to.deep.equal(['invalid', { type: 'event', eventId: 'e2', problem: 'app_id: is required' }]);
    expect(h.seen[3]![1]).to.deep.include({ type: 'accepted', eventId: 'e3' });
    expect((h.seen[3]![1] as { problem: string }).problem).to.match(
      /^type: "accepted" is not a message type of this endpoint/,
    );
    h.connection.close();
  });

  it('keeps the refusal the bridge explains before its close, gives up on it, and rejects start()', async function () {
    const h = harness();
    const start = h.connection.start();
    h.last().open();
    h.last().receive({ type: 'error', code: 'UNAUTHORIZED', error: 'bad token' });
    h.last().drop(CLOSE_CODES.UNAUTHORIZED); // no reason in the close: the error frame's code stands in for it
    const err = await start.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(BridgeConnectionError);
    expect(err).to.include({ closeCode: CLOSE_CODES.UNAUTHORIZED, reason: 'UNAUTHORIZED' });
    expect(h.connection.connectionError).to.deep.equal({ code: 'UNAUTHORIZED', error: 'bad token' });
    expect(h.connection.ready).to.equal(false);
    h.clock.advance(60_000);
    expect(h.sockets).to.have.length(1);
  });

  it('with maxRetries -1 never gives up: thousands of failed attempts, each delay capped, then connects when the bridge is back', async function () {
    const h = harness(-1);
    let started = false;
    const start = h.connection.start().then(() => (started = true));
    const failures = 3_000;
    for (let i = 0; i < failures; i++) {
      h.last().drop(1006); // nothing listening: the socket closes without opening
      h.clock.advance(h.delays.at(-1)!);
    }
    expect(h.sockets).to.have.length(failures + 1);
    expect(h.attempts.at(-1)).to.equal(failures);
    expect(h.delays.slice(0, 8)).to.deep.equal([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
    expect(new Set(h.delays.slice(6))).to.deep.equal(new Set([LIMITS.reconnectMaxDelayMs]));
    expect(h.connection.state).to.equal('reconnecting');
    expect(h.seen.filter(([name]) => name === 'closed')).to.deep.equal([]);

    h.last().open();
    h.last().receive({ type: 'pong' });
    await start;
    expect([started, h.connection.ready]).to.deep.equal([true, true]);
    // Accepted again: the next drop starts the backoff over (C1).
    h.last().drop(1006);
    expect([h.attempts.at(-1), h.delays.at(-1)]).to.deep.equal([1, LIMITS.reconnectBaseDelayMs]);
    h.connection.close();
  });

  it('the backoff stays finite and capped at any attempt number', function () {
    const policy = { baseDelayMs: 1000, maxDelayMs: 60_000, jitter: 0.2 };
    for (const attempt of [1_025, 10_000, Number.MAX_SAFE_INTEGER]) {
      expect(
        backoffDelay(attempt, policy, () => 0),
        `attempt ${attempt}`,
      ).to.equal(60_000);
      expect(
        backoffDelay(attempt, policy, () => 0.5),
        `attempt ${attempt}, jittered`,
      ).to.equal(54_000);
    }
    expect(backoffDelay(3, { ...policy, maxDelayMs: 3_000 }, () => 0)).to.equal(3_000);
  });

  it('forgets a connection error with the socket it came on, and ignores errors of other scopes', function () {
    const h = harness();
    void h.connection.start().catch(() => {});
    h.last().open();
    h.last().receive({ type: 'error', code: 'INVALID_MESSAGE', error: 'a frame error' });
    expect(h.connection.connectionError).to.equal(undefined);
    h.last().receive({ type: 'error', code: 'TOO_MANY_CONNECTIONS', error: 'over the bound' });
    h.last().drop(CLOSE_CODES.TOO_MANY_CONNECTIONS);
    expect(h.connection.connectionError).to.deep.include({ code: 'TOO_MANY_CONNECTIONS' });
    h.clock.advance(60_000);
    expect(h.sockets).to.have.length(2);
    expect(h.connection.connectionError).to.equal(undefined);
    h.connection.close();
  });
});
