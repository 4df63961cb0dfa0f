// The bounds of L13-L16 in the core, without sockets: events in flight per app and per agent (TOO_MANY_EVENTS),
// the streamed text kept for an empty-content reply (per event, per agent, and not for an app that is gone), and a
// reply that cannot fit one frame (REPLY_TOO_LARGE). Every frame is checked against the generated validators; the
// worst single client runs against a bridge with small limits while another client's events keep flowing.
import { expect } from 'chai';
import { LOG_WINDOW_MS } from '../../src/core/burst-log.js';
import { LIMITS, validateServiceToAgentMessage, validateServiceToAppMessage } from '../../generated/index.js';
import { makeBridge, type BridgeOptions } from '../../src/core/bridge.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { Directory, hashToken, type AgentRecord, type AppRecord } from '../../src/core/directory.js';
import type { Socket } from '../../src/core/transport.js';
import {
  peerConnector,
  principalToken,
  recordingBridge,
  type Frame,
  type Peer,
  agentRecord,
} from '../helpers/core-harness.js';

/** A bridge on a frozen clock with apps `a1`, `a2` and connected agents `x`, `y`, and everything it did. */
function setup(options: Partial<BridgeOptions> = {}) {
  const directory = new Directory();
  directory.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
  const apps: Record<string, AppRecord> = {};
  const agents: Record<string, AgentRecord> = {};
  for (const id of ['a1', 'a2'])
    directory.addApp((apps[id] = { app_id: id, org_id: 'org', name: id, active: true, created_at: 0 }));
  // x and y take every app of the organization and are connected; only-a2 allows a2 alone; offline never connects.
  for (const [id, allowlist] of [
    ['x', null],
    ['y', null],
    ['only-a2', ['a2']],
    ['offline', null],
  ] as const) {
    directory.addAgent((agents[id] = agentRecord(id, { allowlist: allowlist && [...allowlist] })));
  }
  const { bridge, clock, rejected, ended, logged } = recordingBridge(directory, options);
  const peer = peerConnector();
  const app = (id: string) =>
    peer(validateServiceToAppMessage, (conn) =>
      bridge.open(conn, { kind: 'app', app: apps[id]!, token: principalToken('app', id) }),
    );
  const agent = (id: string) =>
    peer(validateServiceToAgentMessage, (conn) =>
      bridge.open(conn, { kind: 'agent', agent: agents[id]!, token: principalToken('agent', id) }),
    );
  const x = agent('x');
  const y = agent('y');
  agent('only-a2');
  const send = (conn: Peer, message: unknown) => conn.handlers.message(JSON.stringify(message), false);
  /** Sends an event and returns the app's answer to it (`accepted` or `error`). */
  const event = (from: Peer, agentId: string, payload: object = {}): Frame => {
    const before = from.frames.length;
    send(from, { type: 'event', agent_id: agentId, thread_id: 't', payload });
    expect(from.frames.length, 'one answer per event').to.equal(before + 1);
    return from.frames.at(-1)!;
  };
  const accepted = (from: Peer, agentId: string, payload: object = {}): string => {
    const answer = event(from, agentId, payload);
    expect(answer.type, JSON.stringify(answer)).to.equal('accepted');
    return answer.event_id;
  };
  return { bridge, clock, x, y, app, agent, send, event, accepted, rejected, ended, logged };
}

const codeOf = (frame: Frame | undefined) => (frame?.type === 'error' ? frame.code : frame?.type);
/** The log lines about discarded texts: one per burst, with the count by reason. */
const kept = (logged: [object, string][]) =>
  logged.filter(([, m]) => m.startsWith('streamed text no longer kept')).map(([o]) => o);

describe('bounds on events in flight, streamed text and replies (L13-L16)', function () {
  describe('events in flight per app (L13)', function () {
    it('refuses the app over its bound with TOO_MANY_EVENTS in place of accepted, while another app keeps flowing', function () {
      const { bridge, x, app, event, accepted, send, rejected } = setup({ maxEventsInFlightPerApp: 5 });
      const hostile = app('a1');
      const other = app('a2');
      const big = { text: 'x'.repeat(60_000) }; // the campaign's 60 KB events at an agent that reads and never replies
      const answers = Array.from({ length: 20 }, () => event(hostile, 'x', big));
      expect(answers.map(codeOf)).to.deep.equal([...Array(5).fill('accepted'), ...Array(15).fill('TOO_MANY_EVENTS')]);
      const refusal = answers[5]!;
      expect(refusal).to.include({ agent_id: 'x', code: 'TOO_MANY_EVENTS' });
      expect(refusal.event_id).to.be.a('string');
      expect(refusal.error).to.equal(
        'App a1 has 5 events in flight, the limit; send more once earlier events have ended.',
      );
      expect(x.frames.filter((f) => f.type === 'event')).to.have.length(5); // refused events never reach the agent
      expect(rejected.map(([, code]) => code)).to.deep.equal(Array(15).fill('TOO_MANY_EVENTS'));

      const otherEvent = accepted(other, 'x');
      send(x, { type: 'reply', event_id: otherEvent, content: 'for the other app', done: true });
      expect(other.frames.at(-1)).to.include({ type: 'reply', reply: 'for the other app' });

      // An answered event frees its place.
      send(x, { type: 'reply', event_id: answers[0]!.event_id, content: 'done', done: true });
      expect(codeOf(event(hostile, 'x'))).to.equal('accepted');
      expect(codeOf(event(hostile, 'x'))).to.equal('TOO_MANY_EVENTS');
      expect(bridge.limitCounters().eventsRefused).to.deep.equal({ app: 16, agent: 0, total: 0, payloads: 0 });
      expect(bridge.stats().eventsInFlight).to.equal(5);
    });

    it('counts every connection of the app together, and its events whose connection is gone until they end', function () {
      const { x, app, event, accepted, send } = setup({ maxEventsInFlightPerApp: 3 });
      const first = app('a1');
      const second = app('a1');
      const ids = [accepted(first, 'x'), accepted(first, 'x'), accepted(second, 'x')];
      expect(codeOf(event(second, 'x'))).to.equal('TOO_MANY_EVENTS');
      first.handlers.closed();
      const third = app('a1');
      expect(codeOf(event(third, 'x'))).to.equal('TOO_MANY_EVENTS');
      send(x, { type: 'reply', event_id: ids[0], content: 'unheard', done: true });
      expect(codeOf(event(third, 'x'))).to.equal('accepted');
    });

    it('frees the place of an event that ends by timeout, agent error or AGENT_OFFLINE', function () {
      const { bridge, clock, x, app, event, accepted, send } = setup({
        maxEventsInFlightPerApp: 2,
        agentTimeoutMs: 1000,
        agentReconnectGraceMs: 500,
      });
      const a1 = app('a1');
      const first = accepted(a1, 'x');
      accepted(a1, 'x');
      expect(codeOf(event(a1, 'x'))).to.equal('TOO_MANY_EVENTS');
      send(x, { type: 'error', event_id: first, error: 'no', code: 'AGENT_ERROR' });
      accepted(a1, 'x');
      clock.advance(1000); // both time out
      expect(bridge.stats().eventsInFlight).to.equal(0);
      accepted(a1, 'x');
      accepted(a1, 'y');
      x.handlers.closed();
      clock.advance(500); // x's event ends with AGENT_OFFLINE
      expect(codeOf(event(a1, 'y'))).to.equal('accepted');
    });
  });

  describe('events in flight per agent (L13)', function () {
    it('refuses events for an agent at its bound, from any app, while events for another agent keep flowing', function () {
      const { bridge, x, y, app, event, accepted, send } = setup({ maxEventsInFlightPerAgent: 5 });
      const a1 = app('a1');
      const a2 = app('a2');
      for (let i = 0; i < 3; i++) accepted(a1, 'x');
      for (let i = 0; i < 2; i++) accepted(a2, 'x');
      const refusal = event(a2, 'x');
      expect(refusal).to.include({
        code: 'TOO_MANY_EVENTS',
        agent_id: 'x',
        error: 'Agent x has 5 events in flight, the limit; send more once it has answered some.',
      });
      expect(codeOf(event(a1, 'x'))).to.equal('TOO_MANY_EVENTS');
      const toY = accepted(a2, 'y');
      send(y, { type: 'reply', event_id: toY, content: 'y answers', done: true });
      expect(a2.frames.at(-1)).to.include({ type: 'reply', reply: 'y answers' });
      send(x, { type: 'reply', event_id: x.frames[2]!.event_id, content: 'one', done: true });
      accepted(a1, 'x');
      expect(bridge.limitCounters().eventsRefused).to.deep.equal({ app: 0, agent: 2, total: 0, payloads: 0 });
    });

    it('checks the bounds last (W7): an app at its bound still learns AGENT_NOT_FOUND, PERMISSION_DENIED and AGENT_OFFLINE', function () {
      const { app, event, accepted } = setup({ maxEventsInFlightPerApp: 1 });
      const a1 = app('a1');
      accepted(a1, 'x');
      expect(['nobody', 'only-a2', 'offline', 'x'].map((agentId) => codeOf(event(a1, agentId)))).to.deep.equal([
        'AGENT_NOT_FOUND',
        'PERMISSION_DENIED',
        'AGENT_OFFLINE',
        'TOO_MANY_EVENTS',
      ]);
    });
  });

  describe('events in flight on the node, and the bytes of their payloads (L23)', function () {
    it('refuses one more event than the node holds, from any app to any agent, until one ends', function () {
      const t = setup({ maxEventsInFlight: 3 });
      const [a1, a2] = [t.app('a1'), t.app('a2')];
      const first = t.accepted(a1, 'x');
      t.accepted(a2, 'y');
      t.accepted(a1, 'y');
      const refusal = t.event(a2, 'x');
      expect(refusal).to.include({
        code: 'TOO_MANY_EVENTS',
        error:
          'This node of the bridge has 3 events in flight, its limit; send it again once earlier events have ended.',
      });
      t.send(t.x, { type: 'reply', event_id: first, content: 'done', done: true });
      expect(codeOf(t.event(a2, 'x'))).to.equal('accepted');
      expect(t.bridge.limitCounters().eventsRefused).to.deep.equal({ app: 0, agent: 0, total: 1, payloads: 0 });
    });

    it('counts what the payloads hold, bytes kept off the heap and two bytes a character under 1 KiB, and frees them at the end', function () {
      const big = { text: 'x'.repeat(60_000) }; // kept as 60,011 bytes
      const t = setup({ eventPayloadsMaxBytes: 2 * 60_011 + 2 * 100 });
      const a1 = t.app('a1');
      const ids = [t.accepted(a1, 'x', big), t.accepted(a1, 'y', big)];
      const small = { text: 'y'.repeat(80) }; // 91 characters as JSON: 182 bytes counted, 200 left
      t.accepted(a1, 'x', small);
      const refusal = t.event(a1, 'y', small);
      expect(refusal).to.include({
        code: 'TOO_MANY_EVENTS',
        error: `This node of the bridge holds ${2 * 60_011 + 182} bytes of payloads of events in flight, its limit; send it again once earlier events have ended.`,
      });
      t.send(t.x, { type: 'reply', event_id: ids[0], content: 'done', done: true });
      expect(codeOf(t.event(a1, 'y', big))).to.equal('accepted');
      expect(t.bridge.limitCounters().eventsRefused.payloads).to.equal(1);
    });

    it("bounds the kept texts of every agent together: the event that would cross the node's bound loses its text", function () {
      const t = setup({ streamedTextTotalMaxBytes: 8192 }); // two 4 KiB buffers, whichever agents hold them
      const a1 = t.app('a1');
      const ids = [t.accepted(a1, 'x'), t.accepted(a1, 'y'), t.accepted(a1, 'x')];
      const text = (eventId: string) => `text of ${eventId} `.padEnd(600, '.');
      t.send(t.x, { type: 'token', event_id: ids[0], token: text(ids[0]!) });
      t.send(t.y, { type: 'token', event_id: ids[1], token: text(ids[1]!) });
      t.send(t.x, { type: 'token', event_id: ids[2], token: text(ids[2]!) });
      expect(t.bridge.streamedTextBytes()).to.equal(2 * 4096);
      t.send(t.x, { type: 'reply', event_id: ids[0], content: '', done: true });
      t.send(t.y, { type: 'reply', event_id: ids[1], content: '', done: true });
      t.send(t.x, { type: 'reply', event_id: ids[2], content: '', done: true });
      const answers = a1.frames.filter((f) => f.type === 'reply' || f.type === 'error');
      expect(answers.map((f) => f.reply ?? f.code)).to.deep.equal([text(ids[0]!), text(ids[1]!), 'REPLY_TOO_LARGE']);
      expect(t.bridge.limitCounters().textDiscarded).to.deep.equal({
        event_limit: 0,
        agent_limit: 0,
        node_limit: 1,
        app_gone: 0,
      });
      expect(t.bridge.streamedTextBytes()).to.equal(0);
    });
  });

  describe('streamed text kept for an empty-content reply (L14)', function () {
    /** Streams `fragments` for a new event of a1 at x; returns the event id and the app's connection. */
    function streamed(t: ReturnType<typeof setup>, fragments: string[]) {
      const a1 = t.app('a1');
      const eventId = t.accepted(a1, 'x');
      for (const token of fragments) t.send(t.x, { type: 'token', event_id: eventId, token });
      return { a1, eventId };
    }

    it('ends an empty-content reply over the per-event bound with REPLY_TOO_LARGE to agent and app, after forwarding every fragment', function () {
      const t = setup({ streamedTextMaxBytes: 100 });
      const fragments = Array.from({ length: 15 }, (_, i) => `word${String(i).padStart(4, '0')} `); // 150 bytes
      const { a1, eventId } = streamed(t, fragments);
      expect(a1.frames.filter((f) => f.type === 'token').map((f) => f.token)).to.deep.equal(fragments);
      expect(t.bridge.streamedTextBytes()).to.equal(0); // discarded at the fragment that crossed 100 bytes
      t.send(t.x, { type: 'reply', event_id: eventId, content: '', done: true });

      expect(t.x.frames.at(-1)).to.include({ type: 'error', code: 'REPLY_TOO_LARGE', event_id: eventId });
      const answer = a1.frames.at(-1)!;
      expect(answer).to.include({ type: 'error', code: 'REPLY_TOO_LARGE', event_id: eventId, agent_id: 'x' });
      expect(
        a1.frames.some((f) => f.type === 'reply'),
        'never a part of the text as the reply',
      ).to.equal(false);
      expect(t.ended.at(-1)).to.include({ outcome: 'agent_error', code: 'REPLY_TOO_LARGE', tokens_used: null });
      expect(t.bridge.limitCounters().textDiscarded).to.deep.equal({
        event_limit: 1,
        agent_limit: 0,
        node_limit: 0,
        app_gone: 0,
      });
      expect(t.bridge.limitCounters().repliesRefused).to.deep.equal({ too_large: 0, text_not_kept: 1 });
      expect(kept(t.logged)).to.deep.equal([{ events: 1, reasons: { event_limit: 1 } }]); // once per event
      t.send(t.x, { type: 'token', event_id: eventId, token: 'late' });
      expect(t.x.frames.at(-1)).to.include({ code: 'INVALID_EVENT_ID' }); // the event has ended
    });

    it('replies with the content when the agent sends it, however much was streamed', function () {
      const t = setup({ streamedTextMaxBytes: 100 });
      const { a1, eventId } = streamed(
        t,
        Array.from({ length: 15 }, () => 'ten bytes '),
      );
      t.send(t.x, { type: 'reply', event_id: eventId, content: 'the whole answer', done: true });
      expect(a1.frames.at(-1)).to.include({ type: 'reply', reply: 'the whole answer' });
      expect(a1.frames.at(-1)!.metadata.tokens_used).to.equal(15);
    });

    it('joins the fragments of a text exactly at the bound, a surrogate pair split across two fragments included', function () {
      const t = setup({ streamedTextMaxBytes: 100 });
      const fragments = ['x'.repeat(90), 'ab\ud83d', '\ude00"\n']; // 90 + 5 + 5 bytes, as measured one by one
      const { a1, eventId } = streamed(t, fragments);
      t.send(t.x, { type: 'reply', event_id: eventId, content: '', done: true });
      expect(a1.frames.at(-1)).to.include({ type: 'reply', reply: `${'x'.repeat(90)}ab😀"\n` });
      expect(t.bridge.limitCounters().textDiscarded.event_limit).to.equal(0);
    });

    it("bounds the text of all of one agent's events together: the event that would cross it loses its text, the others reply", function () {
      const t = setup({ streamedTextPerAgentMaxBytes: 8192 }); // two 4 KiB buffers
      const a1 = t.app('a1');
      const ids = [t.accepted(a1, 'x'), t.accepted(a1, 'x'), t.accepted(a1, 'x'), t.accepted(a1, 'y')];
      const text = (eventId: string) => `text of ${eventId} `.padEnd(600, '.'); // over a batch: written to a buffer at once
      for (const eventId of ids.slice(0, 3)) t.send(t.x, { type: 'token', event_id: eventId, token: text(eventId) });
      t.send(t.y, { type: 'token', event_id: ids[3], token: text(ids[3]!) }); // another agent has a budget of its own
      expect(t.bridge.streamedTextBytes()).to.equal(3 * 4096);
      for (const eventId of ids.slice(0, 3)) t.send(t.x, { type: 'reply', event_id: eventId, content: '', done: true });
      t.send(t.y, { type: 'reply', event_id: ids[3], content: '', done: true });
      const answers = a1.frames.filter((f) => f.type === 'reply' || f.type === 'error');
      expect(answers.map((f) => f.reply ?? f.code)).to.deep.equal([
        text(ids[0]!),
        text(ids[1]!),
        'REPLY_TOO_LARGE',
        text(ids[3]!),
      ]);
      expect(t.bridge.limitCounters().textDiscarded).to.deep.equal({
        event_limit: 0,
        agent_limit: 1,
        node_limit: 0,
        app_gone: 0,
      });
      expect(t.bridge.streamedTextBytes()).to.equal(0);
    });

    it("holds at most the per-event bound for a stream of any length (the campaign's 150 MB streams ran the heap out)", function () {
      const t = setup();
      const { a1, eventId } = streamed(t, []);
      const fragment = 'y'.repeat(LIMITS.tokenFragmentMaxBytes);
      let most = 0;
      for (let i = 0; i < 600; i++) {
        t.send(t.x, { type: 'token', event_id: eventId, token: fragment }); // 2.4 MB in all
        most = Math.max(most, t.bridge.streamedTextBytes());
      }
      expect(most)
        .to.be.at.most(LIMITS.streamedTextMaxBytes + 3)
        .and.at.least(LIMITS.streamedTextMaxBytes / 2);
      expect(t.bridge.streamedTextBytes()).to.equal(0);
      expect(a1.frames.filter((f) => f.type === 'token')).to.have.length(600);
    });
  });

  describe('an app that is gone (L15)', function () {
    it("stops keeping and forwarding its events' text at once, logs it once per event, and ends the event quietly on the reply", function () {
      const t = setup();
      const a1 = t.app('a1');
      const first = t.accepted(a1, 'x');
      const second = t.accepted(a1, 'x');
      t.accepted(a1, 'x'); // streams nothing: it has a text to let go of all the same
      for (const eventId of [first, second])
        t.send(t.x, { type: 'token', event_id: eventId, token: 'kept until the app goes '.repeat(25) });
      expect(t.bridge.streamedTextBytes()).to.equal(2 * 4096);
      const framesBefore = a1.frames.length;
      const forwardedBefore = t.bridge.tokensForwarded();

      a1.handlers.closed();
      expect(t.bridge.streamedTextBytes()).to.equal(0);
      for (let i = 0; i < 100; i++) t.send(t.x, { type: 'token', event_id: first, token: 'nobody reads this ' });
      expect(t.bridge.streamedTextBytes()).to.equal(0);
      expect(t.bridge.tokensForwarded()).to.equal(forwardedBefore);
      expect(a1.frames).to.have.length(framesBefore);
      expect(t.bridge.limitCounters().textDiscarded).to.deep.equal({
        event_limit: 0,
        agent_limit: 0,
        node_limit: 0,
        app_gone: 3,
      });
      expect(kept(t.logged)).to.deep.equal([{ events: 1, reasons: { app_gone: 1 } }]); // the first of the burst at once
      t.clock.advance(LOG_WINDOW_MS);
      expect(kept(t.logged)).to.deep.equal([
        { events: 1, reasons: { app_gone: 1 } },
        { events: 2, reasons: { app_gone: 2 } },
      ]);

      t.send(t.x, { type: 'reply', event_id: first, content: '', done: true });
      t.send(t.x, { type: 'reply', event_id: second, content: 'with content', done: true });
      expect(
        t.x.frames.filter((f) => f.type === 'error'),
        'the agent did nothing wrong',
      ).to.deep.equal([]);
      expect(t.ended.map((e) => e.outcome)).to.deep.equal(['replied', 'replied']);
      expect(t.bridge.stats().eventsInFlight).to.equal(1);
    });
  });

  describe('replies that cannot fit one frame (L16)', function () {
    const maxPayload = () => ({ d: 'p'.repeat(LIMITS.payloadMaxBytes - '{"d":""}'.length) });

    it('refuses content over replyContentMaxBytes at the agent, and ends the event for the app with REPLY_TOO_LARGE', function () {
      const t = setup();
      const a1 = t.app('a1');
      const eventId = t.accepted(a1, 'x');
      t.send(t.x, {
        type: 'reply',
        event_id: eventId,
        content: 'c'.repeat(LIMITS.replyContentMaxBytes + 1),
        done: true,
      });
      expect(t.x.frames.at(-1)).to.include({ type: 'error', code: 'REPLY_TOO_LARGE', event_id: eventId });
      expect(t.x.frames.at(-1)!.error).to.equal(
        `The reply's text is ${LIMITS.replyContentMaxBytes + 1} bytes; one reply carries at most ${LIMITS.replyContentMaxBytes}. The event has ended.`,
      );
      expect(a1.frames.at(-1)).to.include({ type: 'error', code: 'REPLY_TOO_LARGE', event_id: eventId, agent_id: 'x' });
      expect(t.ended.at(-1)).to.include({ outcome: 'agent_error', code: 'REPLY_TOO_LARGE' });
      expect(t.bridge.limitCounters().repliesRefused).to.deep.equal({ too_large: 1, text_not_kept: 0 });
    });

    it('counts escapes as the frame writes them: a text of quotes is twice its length', function () {
      const t = setup();
      const a1 = t.app('a1');
      const eventId = t.accepted(a1, 'x');
      t.send(t.x, {
        type: 'reply',
        event_id: eventId,
        content: '"'.repeat(LIMITS.replyContentMaxBytes / 2 + 1),
        done: true,
      });
      expect(a1.frames.at(-1)).to.include({ code: 'REPLY_TOO_LARGE' });
    });

    it('delivers a reply of exactly replyContentMaxBytes with the largest payload in one frame of at most frameMaxBytes', function () {
      const t = setup();
      const a1 = t.app('a1');
      const eventId = t.accepted(a1, 'x', maxPayload());
      const content = 'é'.repeat(LIMITS.replyContentMaxBytes / 2);
      t.send(t.x, { type: 'reply', event_id: eventId, content, done: true, metadata: { model: 'm'.repeat(1000) } });
      expect(a1.frames.at(-1)).to.include({ type: 'reply', reply: content });
      expect(Buffer.byteLength(a1.texts.at(-1)!)).to.be.at.most(LIMITS.frameMaxBytes);
    });

    it('leaves room for the longest ids, thread and session key and a model name of 7500 bytes (replyEnvelopeMaxBytes)', function () {
      const longest = (id: string) => id.padEnd(LIMITS.idMaxChars, '-');
      const directory = new Directory();
      directory.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
      const app: AppRecord = { app_id: longest('app'), org_id: 'org', name: 'a', active: true, created_at: 0 };
      const agent: AgentRecord = agentRecord(longest('agent'), { name: 'b' });
      directory.addApp(app);
      directory.addAgent(agent);
      const bridge = makeBridge({ directory, clock: new AdjustableClock({ frozen: true, start: 0 }) });
      const sent: string[] = [];
      const conn = (id: number): Socket => ({
        id,
        send: (text) => sent.push(text),
        close() {},
        bufferedBytes: () => 0,
      });
      const appConn = conn(1);
      const agentConn = conn(2);
      const fromApp = bridge.open(appConn, {
        kind: 'app',
        app,
        token: { hash: hashToken('a'), kind: 'app', owner_id: app.app_id, created_at: 0, expires_at: null },
      });
      const fromAgent = bridge.open(agentConn, {
        kind: 'agent',
        agent,
        token: { hash: hashToken('b'), kind: 'agent', owner_id: agent.agent_id, created_at: 0, expires_at: null },
      });
      const threadId = `${'"\\😀'.repeat((LIMITS.threadIdMaxChars - 1) / 3)}"`; // 121 points, each 2 escaped or 4 UTF-8 bytes
      fromApp.message(
        JSON.stringify({ type: 'event', agent_id: agent.agent_id, thread_id: threadId, payload: maxPayload() }),
        false,
      );
      const answer = JSON.parse(sent[0]!);
      expect(answer.type).to.equal('accepted');
      const eventId = answer.event_id;
      const reply = {
        type: 'reply',
        event_id: eventId,
        content: 'c'.repeat(LIMITS.replyContentMaxBytes),
        done: true,
        metadata: { tokens_used: Number.MAX_SAFE_INTEGER, model: 'm'.repeat(7500) },
      };
      fromAgent.message(JSON.stringify(reply), false);
      const frame = sent.at(-1)!;
      expect(JSON.parse(frame).type).to.equal('reply');
      expect(Buffer.byteLength(frame)).to.be.within(LIMITS.frameMaxBytes - 100, LIMITS.frameMaxBytes);
    });

    it('refuses a reply whose whole frame would still be over frameMaxBytes (an outsized model name)', function () {
      const t = setup();
      const a1 = t.app('a1');
      const eventId = t.accepted(a1, 'x', maxPayload());
      t.send(t.x, {
        type: 'reply',
        event_id: eventId,
        content: 'c'.repeat(LIMITS.replyContentMaxBytes),
        done: true,
        metadata: { model: 'm'.repeat(10_000) },
      });
      expect(t.x.frames.at(-1)).to.include({ code: 'REPLY_TOO_LARGE', event_id: eventId });
      expect(t.x.frames.at(-1)!.error).to.match(
        /^The reply frame would be \d+ bytes, over the frame limit of 1048576; shorten metadata.model\./,
      );
      expect(a1.frames.at(-1)).to.include({ code: 'REPLY_TOO_LARGE' });
    });

    it('tells the agent about an outsized content even when the app is gone', function () {
      const t = setup();
      const a1 = t.app('a1');
      const eventId = t.accepted(a1, 'x');
      a1.handlers.closed();
      t.send(t.x, {
        type: 'reply',
        event_id: eventId,
        content: 'c'.repeat(LIMITS.replyContentMaxBytes + 1),
        done: true,
      });
      expect(t.x.frames.at(-1)).to.include({ code: 'REPLY_TOO_LARGE', event_id: eventId });
    });
  });
});
