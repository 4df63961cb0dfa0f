// The bytes the core holds for connections, bounded per connection, per app, per agent and per node (W17, L19, L20),
// and dead connections noticed by a WebSocket ping (L22), without sockets: fake sockets whose queue grows with every
// frame until the test drains it, that record pings, closes and terminations. A canary of another organization
// keeps flowing while one app or agent runs into its bounds.
import { expect } from 'chai';
import {
  CLOSE_CODES,
  LIMITS,
  validateServiceToAgentMessage,
  validateServiceToAppMessage,
  type Validator,
} from '../../generated/index.js';
import type { BridgeOptions } from '../../src/core/bridge.js';
import { Directory, type AgentRecord, type AppRecord } from '../../src/core/directory.js';
import type { ConnectionHandlers, Socket } from '../../src/core/transport.js';
import { agentRecord, principalToken, recordingBridge, type Frame } from '../helpers/core-harness.js';

interface FakeSocket extends Socket {
  handlers: ConnectionHandlers;
  frames: Frame[];
  /** Characters queued and not read: every frame adds its length, until `drain`. */
  queued: number;
  /** A client that reads everything at once: its queue stays empty. */
  reads: boolean;
  closedWith?: [number, string];
  terminated: boolean;
  /** What a ping's `left` callback is, until the test says it left. */
  pings: (() => void)[];
}

const text = 'x'.repeat(4000);
const codeOf = (frame: Frame | undefined) => (frame?.type === 'error' ? frame.code : frame?.type);

function setup(options: Partial<BridgeOptions> = {}) {
  const directory = new Directory();
  const apps: Record<string, AppRecord> = {};
  const agents: Record<string, AgentRecord> = {};
  // org: the hostile app a1 and its agent x; canary: app c1 and agent y, which must never notice a thing.
  for (const [org, app, agent] of [
    ['org', 'a1', 'x'],
    ['canary', 'c1', 'y'],
  ] as const) {
    directory.addOrg({ org_id: org, name: org, created_at: 0 });
    directory.addApp((apps[app] = { app_id: app, org_id: org, name: app, active: true, created_at: 0 }));
    directory.addAgent((agents[agent] = agentRecord(agent, { org_id: org })));
  }
  const { bridge, clock, logged } = recordingBridge(directory, options);
  let ids = 0;
  const socket = (
    validate: Validator<unknown>,
    open: (s: Socket) => ConnectionHandlers,
    { reads = false, pings = false } = {},
  ): FakeSocket => {
    const s = {
      id: ++ids,
      frames: [] as Frame[],
      queued: 0,
      reads,
      terminated: false,
      pings: [] as (() => void)[],
      send(frame: string) {
        const parsed: Frame = JSON.parse(frame);
        if (!validate(parsed as unknown)) throw new Error(`invalid frame ${frame.slice(0, 200)}`);
        s.frames.push(parsed);
        if (!s.reads) s.queued += frame.length;
      },
      close(code: number, reason: string) {
        s.closedWith ??= [code, reason];
      },
      bufferedBytes: () => s.queued,
      terminate() {
        s.terminated = true;
        s.queued = 0;
      },
      ...(pings ? { ping: (left: () => void) => void s.pings.push(left) } : {}),
    } as FakeSocket;
    s.handlers = open(s);
    return s;
  };
  const app = (id: string, opts?: { reads?: boolean; pings?: boolean }) =>
    socket(
      validateServiceToAppMessage as Validator<unknown>,
      (s) => bridge.open(s, { kind: 'app', app: apps[id]!, token: principalToken('app', id) }),
      opts,
    );
  const agent = (id: string, opts?: { reads?: boolean; pings?: boolean }) =>
    socket(
      validateServiceToAgentMessage as Validator<unknown>,
      (s) => bridge.open(s, { kind: 'agent', agent: agents[id]!, token: principalToken('agent', id) }),
      opts,
    );
  const send = (s: FakeSocket, message: unknown) => s.handlers.message(JSON.stringify(message), false);
  /** An accepted event from `from` to `agentId`; its id. */
  const event = (from: FakeSocket, agentId: string, payload: object = {}): string => {
    send(from, { type: 'event', agent_id: agentId, thread_id: 't', payload });
    const answer = from.frames.at(-1)!;
    expect(answer.type, JSON.stringify(answer)).to.equal('accepted');
    return answer.event_id;
  };
  return { bridge, clock, logged, app, agent, send, event, counters: () => bridge.limitCounters() };
}

describe('bytes held for connections, and dead ones (W17, L19, L20, L22)', function () {
  describe('bytes waiting to be sent, across connections (L19)', function () {
    const bounds = {
      sendBufferMaxBytes: 100_000,
      sendBufferBounds: { app: 150_000, agent: 150_000, total: 1_000_000 },
    };

    it("closes the app's connection holding the most with SLOW_CONSUMER once its connections together hold too much; the canary flows", function () {
      const { app, agent, send, event, counters } = setup(bounds);
      const x = agent('x', { reads: true });
      const y = agent('y', { reads: true });
      const unread = [app('a1'), app('a1'), app('a1')];
      const canary = app('c1', { reads: true });
      const events = unread.map((c) => event(c, 'x'));
      const canaryEvent = event(canary, 'y');

      // The agent streams to the three events in turn: each connection alone stays under 100,000.
      let rounds = 0;
      while (!unread.some((c) => c.closedWith)) {
        for (const id of events) send(x, { type: 'token', event_id: id, token: text });
        send(y, { type: 'token', event_id: canaryEvent, token: text });
        rounds++;
      }
      const victim = unread.find((c) => c.closedWith)!;
      expect(victim.closedWith).to.deep.equal([CLOSE_CODES.SLOW_CONSUMER, 'SLOW_CONSUMER']);
      const error = victim.frames.at(-1)!;
      expect(error).to.include({ type: 'error', code: 'SLOW_CONSUMER' });
      expect(error.error).to.match(
        /^More than 150000 bytes were waiting for the connections of app a1 to read them, and this connection held the most \(\d+\)/,
      );
      expect(Math.max(...unread.map((c) => c.queued)), 'no connection reached its own bound').to.be.below(100_000);
      expect(
        unread.reduce((sum, c) => sum + c.queued, 0),
        'the sum went over by at most one frame',
      ).to.be.at.most(150_000 + text.length + 200);
      expect(counters().slowConsumers).to.deep.equal({ connection: 0, app: 1, agent: 0, total: 0 });

      // Once the closed connection's socket is gone, the others have room again; the canary got every fragment.
      victim.handlers.closed();
      const open = unread.filter((c) => c !== victim);
      for (const c of open) c.queued = 0;
      for (const id of events) send(x, { type: 'token', event_id: id, token: text });
      expect(open.map((c) => codeOf(c.frames.at(-1)))).to.deep.equal(['token', 'token']);
      expect(canary.frames.filter((f) => f.type === 'token')).to.have.length(rounds);
      expect(canary.closedWith).to.equal(undefined);
    });

    it('reads the connections again before closing any: queues that drained since their last frame do not count', function () {
      const { app, agent, send, event, counters } = setup(bounds);
      const x = agent('x', { reads: true });
      const [first, second] = [app('a1'), app('a1')];
      const [one, two] = [event(first, 'x'), event(second, 'x')];
      for (let i = 0; i < 20; i++) send(x, { type: 'token', event_id: one, token: text }); // 80,000 queued
      first.queued = 0; // the client read it all; the bridge has not written to it since
      for (let i = 0; i < 20; i++) send(x, { type: 'token', event_id: two, token: text }); // 160,000 by the estimate
      expect(first.closedWith ?? second.closedWith).to.equal(undefined);
      expect(counters().slowConsumers.app).to.equal(0);
    });

    it("bounds an agent's connections together: one closed already that still holds the most is destroyed", function () {
      const { app, agent, send, counters, bridge } = setup({
        sendBufferMaxBytes: 100_000,
        sendBufferBounds: { app: 1_000_000, agent: 150_000, total: 1_000_000 },
      });
      const old = agent('x');
      const a1 = app('a1', { reads: true });
      const payload = { text: 'y'.repeat(30_000) };
      for (let i = 0; i < 3; i++) send(a1, { type: 'event', agent_id: 'x', thread_id: 't', payload });
      expect(old.queued).to.be.above(90_000).and.below(100_000);
      const fresh = agent('x'); // replaces it: told CONNECTION_REPLACED, its socket not gone yet (it does not read)
      expect(old.closedWith).to.deep.equal([CLOSE_CODES.CONNECTION_REPLACED, 'CONNECTION_REPLACED']);
      for (let i = 0; i < 2; i++) send(a1, { type: 'event', agent_id: 'x', thread_id: 't', payload });
      expect(old.terminated, 'the replaced connection, holding the most, is destroyed').to.equal(true);
      expect(fresh.closedWith).to.equal(undefined);
      expect(fresh.frames.filter((f) => f.type === 'event')).to.have.length(2);
      expect(counters().destroyed).to.deep.equal({ app: 0, agent: 1, total: 0, timeout: 0 });
      expect(bridge.sendBufferBytes()).to.equal(fresh.queued);
    });

    it("bounds the node's connections together, whoever they belong to", function () {
      const { app, agent, send, event, counters } = setup({
        sendBufferMaxBytes: 100_000,
        sendBufferBounds: { app: 1_000_000, agent: 1_000_000, total: 150_000 },
      });
      const [x, y] = [agent('x', { reads: true }), agent('y', { reads: true })];
      const [a, c] = [app('a1'), app('c1')];
      const [ea, ec] = [event(a, 'x'), event(c, 'y')];
      for (let i = 0; i < 15; i++) send(x, { type: 'token', event_id: ea, token: text }); // 60,000 for a1
      for (let i = 0; !a.closedWith && !c.closedWith; i++) send(y, { type: 'token', event_id: ec, token: text });
      expect(c.closedWith, 'the canary now holds the most').to.deep.equal([CLOSE_CODES.SLOW_CONSUMER, 'SLOW_CONSUMER']);
      expect(c.frames.at(-1)!.error).to.match(
        /^More than 150000 bytes were waiting for the bridge's clients to read them, and this connection held the most/,
      );
      expect(counters().slowConsumers.total).to.equal(1);
    });

    it('keeps the bound of one connection (W17), counted apart', function () {
      const { app, agent, send, event, counters } = setup(bounds);
      const x = agent('x', { reads: true });
      const a = app('a1');
      const id = event(a, 'x');
      while (!a.closedWith) send(x, { type: 'token', event_id: id, token: text });
      expect(a.frames.at(-1)!.error).to.equal(
        'More than 100000 bytes were waiting for this connection to read them; read faster or open fewer streams.',
      );
      expect(counters().slowConsumers).to.deep.equal({ connection: 1, app: 0, agent: 0, total: 0 });
    });
  });

  describe('messages received in part (L20)', function () {
    const bounds = { partialMessageBounds: { app: 150_000, agent: 150_000, total: 1_000_000 } };

    it("closes the app's connection holding the most with INCOMPLETE_MESSAGE once its connections together hold too much; the canary sends on", function () {
      const { app, agent, event, counters, bridge } = setup(bounds);
      agent('x', { reads: true });
      agent('y', { reads: true });
      const [a, b, c] = [app('a1', { reads: true }), app('a1', { reads: true }), app('a1', { reads: true })];
      const canary = app('c1', { reads: true });
      canary.handlers.partial!(140_000, true);
      a.handlers.partial!(60_000, true);
      b.handlers.partial!(70_000, true);
      expect([a, b, c].map((s) => s.closedWith)).to.deep.equal([undefined, undefined, undefined]);
      c.handlers.partial!(30_000, true); // 160,000: b holds the most
      expect(b.closedWith).to.deep.equal([CLOSE_CODES.INCOMPLETE_MESSAGE, 'INCOMPLETE_MESSAGE']);
      expect(b.frames.at(-1)!.error).to.equal(
        'The connections of app a1 hold 160000 bytes of messages started and not yet whole, over the limit of 150000, and this connection held the most of them.',
      );
      expect([a, c].map((s) => s.closedWith)).to.deep.equal([undefined, undefined]);
      expect(counters().incompleteMessages).to.deep.equal({ app: 1, agent: 0, total: 0, timeout: 0 });
      b.handlers.closed();
      expect(bridge.partialMessageBytes()).to.equal(230_000);
      canary.handlers.partial!(0, false);
      expect(event(canary, 'y')).to.be.a('string');
    });

    it('gives a message partialMessageTimeoutMs from its first byte to arrive whole; a message that ends makes the next one start again', function () {
      const { app, agent, clock, counters } = setup({ partialMessageTimeoutMs: 30_000 });
      agent('x', { reads: true });
      const [slow, steady] = [app('a1', { reads: true }), app('a1', { reads: true })];
      slow.handlers.partial!(2_000, true);
      steady.handlers.partial!(2_000, true);
      clock.advance(20_000);
      slow.handlers.partial!(3_000, false); // more of the same message: its deadline stays
      steady.handlers.partial!(0, false);
      steady.handlers.partial!(1_500, true); // a new message: its own 30 s
      clock.advance(9_999);
      expect(slow.closedWith).to.equal(undefined);
      clock.advance(1);
      expect(slow.closedWith).to.deep.equal([CLOSE_CODES.INCOMPLETE_MESSAGE, 'INCOMPLETE_MESSAGE']);
      expect(slow.frames.at(-1)!.error).to.equal(
        'A message was started 30 s ago and has not arrived whole; every message must arrive within 30 s of its first byte.',
      );
      clock.advance(19_999);
      expect(steady.closedWith).to.equal(undefined);
      clock.advance(1);
      expect(steady.closedWith).to.deep.equal([CLOSE_CODES.INCOMPLETE_MESSAGE, 'INCOMPLETE_MESSAGE']);
      expect(counters().incompleteMessages.timeout).to.equal(2);
    });

    it("counts a refused handshake in the node's sum until it is gone, and destroys it when it holds the most", function () {
      const { bridge, app, agent, counters } = setup({
        partialMessageBounds: { app: 1_000_000, agent: 1_000_000, total: 150_000 },
      });
      agent('x', { reads: true });
      const a = app('a1', { reads: true });
      let terminated = false;
      const refused: Socket = {
        id: 99,
        send() {},
        close() {},
        bufferedBytes: () => 0,
        terminate: () => void (terminated = true),
      };
      const handlers = bridge.connect(refused, {
        path: '/v1/ws/app',
        authorization: 'Bearer rlk_nope_0000',
        query: new URLSearchParams(),
        address: '10.0.0.9',
      });
      handlers.partial!(100_000, true);
      a.handlers.partial!(60_000, true);
      expect(terminated).to.equal(true);
      expect(a.closedWith).to.equal(undefined);
      expect(counters().destroyed.total).to.equal(1);
      expect(bridge.partialMessageBytes()).to.equal(60_000);
    });
  });

  describe('dead connections (L22)', function () {
    it('pings a connection silent for wsPingAfterMs and closes it with HEARTBEAT_TIMEOUT wsPongTimeoutMs after the ping left: 30 s, not 90', function () {
      const { agent, clock, counters } = setup();
      const x = agent('x', { pings: true });
      clock.advance(LIMITS.wsPingAfterMs - 1);
      expect(x.pings).to.have.length(0);
      clock.advance(1);
      expect(x.pings).to.have.length(1);
      x.pings[0]!(); // written to the network now
      clock.advance(LIMITS.wsPongTimeoutMs - 1);
      expect(x.closedWith).to.equal(undefined);
      clock.advance(1);
      expect(x.closedWith).to.deep.equal([CLOSE_CODES.HEARTBEAT_TIMEOUT, 'HEARTBEAT_TIMEOUT']);
      expect(x.frames.at(-1)!.error).to.equal(
        'The WebSocket ping sent 10 s ago was not answered; the connection is taken for dead.',
      );
      expect(LIMITS.wsPingAfterMs + LIMITS.wsPongTimeoutMs, 'noticed after').to.equal(30_000);
      expect(counters().heartbeatTimeouts).to.deep.equal({ silent: 0, no_pong: 1 });
    });

    it('without pings (WS_PING_AFTER_MS=0) noticed only by the idle close, after 90 s', function () {
      const { agent, clock, counters } = setup({ wsPingAfterMs: 0 });
      const x = agent('x', { pings: true });
      clock.advance(LIMITS.idleCloseMs - 1);
      expect(x.pings).to.have.length(0);
      expect(x.closedWith).to.equal(undefined);
      clock.advance(1);
      expect(x.closedWith).to.deep.equal([CLOSE_CODES.HEARTBEAT_TIMEOUT, 'HEARTBEAT_TIMEOUT']);
      expect(counters().heartbeatTimeouts).to.deep.equal({ silent: 1, no_pong: 0 });
    });

    it('keeps a connection that answers, pings it again after the next silence, and counts the deadline from when the ping left', function () {
      const { agent, app, send, clock } = setup();
      const x = agent('x', { pings: true });
      const a = app('a1', { pings: true, reads: true });
      clock.advance(LIMITS.wsPingAfterMs + 5_000); // asked for at 20 s; leaves only at 25 s (queued behind a backlog)
      x.pings[0]!();
      a.pings[0]!();
      clock.advance(LIMITS.wsPongTimeoutMs - 1);
      x.handlers.pong!();
      send(a, { type: 'ping' }); // a message is as good as a pong
      const heard = clock.now();
      clock.advance(1);
      expect([x.closedWith, a.closedWith]).to.deep.equal([undefined, undefined]);
      clock.advance(heard + LIMITS.wsPingAfterMs - 1 - clock.now());
      expect(x.pings).to.have.length(1);
      clock.advance(1);
      expect(x.pings).to.have.length(2);
      // L7 still closes a connection that answers pings but never sends a message.
      for (let t = clock.now(); x.closedWith === undefined;) {
        clock.advance(1_000);
        if (x.pings.length) for (const left of x.pings.splice(0)) left();
        x.handlers.pong!();
        if (clock.now() - t > LIMITS.idleCloseMs) break;
      }
      expect(x.closedWith).to.deep.equal([CLOSE_CODES.HEARTBEAT_TIMEOUT, 'HEARTBEAT_TIMEOUT']);
      expect(x.frames.at(-1)!.error).to.match(/^Nothing was received for 90 s/);
    });
  });
});
