// Resumable streams in the core (R1-R7), without sockets: a connection opened with ?resume=1 gets resume tokens
// and positions, takes an event back after a drop with nothing lost and nothing repeated, is refused or told of a
// gap as the spec says, and what is kept stays within its window and bounds. A connection without ?resume=1 sees
// exactly what it saw before the extension.
import { expect } from 'chai';
import {
  ENDPOINT_PATHS,
  LIMITS,
  validateServiceToAgentMessage,
  validateServiceToAppMessage,
} from '../../generated/index.js';
import type { BridgeOptions } from '../../src/core/bridge.js';
import { DEFAULT_FAIR_SHARES } from '../../src/core/fair-share.js';
import { Directory, type AppRecord } from '../../src/core/directory.js';
import type { Socket } from '../../src/core/transport.js';
import {
  peerConnector,
  principalToken,
  recordingBridge,
  type Frame,
  type Peer,
  agentRecord,
} from '../helpers/core-harness.js';

const WINDOW_MS = LIMITS.resumeWindowMs;
/** What a kept fragment counts (R7): its JSON as kept, its index, and a buffer when it opens a batch. */
const cost = (fragment: string, opensBatch: boolean) =>
  Buffer.byteLength(JSON.stringify(fragment), 'utf8') +
  LIMITS.resumeFragmentIndexBytes +
  (opensBatch ? LIMITS.resumeBufferOverheadBytes : 0);
/** Over 1024 characters a fragment fills a batch alone: each one counts the same. */
const LONE = 1100;

/** A bridge on a frozen clock with apps `a1`, `a2` and the connected agent `x`. */
function setup(options: Partial<BridgeOptions> = {}) {
  const directory = new Directory();
  directory.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
  const apps: Record<string, AppRecord> = {};
  for (const id of ['a1', 'a2'])
    directory.addApp((apps[id] = { app_id: id, org_id: 'org', name: id, active: true, created_at: 0 }));
  const agent = agentRecord('x');
  directory.addAgent(agent);
  const { bridge, clock, ended, logged } = recordingBridge(directory, options);
  const peer = peerConnector();
  /** An app connection, resumable (?resume=1) or not. */
  const app = (id: string, resumable: boolean) =>
    peer(validateServiceToAppMessage, (conn) =>
      bridge.open(conn, { kind: 'app', app: apps[id]!, token: principalToken('app', id) }, undefined, resumable),
    );
  const x = peer(validateServiceToAgentMessage, (conn) =>
    bridge.open(conn, { kind: 'agent', agent, token: principalToken('agent', 'x') }),
  );
  const send = (conn: Peer, message: unknown) => conn.handlers.message(JSON.stringify(message), false);
  /** Sends an event; its `accepted`. */
  const accepted = (from: Peer): Frame => {
    send(from, { type: 'event', agent_id: 'x', thread_id: 't', payload: { q: 1 } });
    const answer = from.frames.at(-1)!;
    expect(answer.type, JSON.stringify(answer)).to.equal('accepted');
    return answer;
  };
  const tokens = (eventId: string, ...fragments: string[]) =>
    fragments.forEach((token) => send(x, { type: 'token', event_id: eventId, token }));
  const reply = (eventId: string, content = '') => send(x, { type: 'reply', event_id: eventId, content, done: true });
  const drop = (conn: Peer) => conn.handlers.closed();
  const resume = (conn: Peer, a: Frame, afterSeq: number, resumeToken = a.resume_token) => {
    const before = conn.frames.length;
    send(conn, { type: 'resume', event_id: a.event_id, resume_token: resumeToken, after_seq: afterSeq });
    return conn.frames.slice(before);
  };
  return { bridge, clock, x, app, send, accepted, tokens, reply, drop, resume, ended, logged };
}

const seqs = (frames: Frame[]) =>
  frames.map((f) => (f.type === 'token' ? `${f.seq}:${f.token}` : f.type === 'error' ? f.code : f.type));

describe('resumable streams in the core (R1-R7)', function () {
  describe('a connection without ?resume=1 (R1)', function () {
    it('gets every frame exactly as before the extension: no resume_token, no seq', function () {
      const { app, accepted, tokens, reply, send, x } = setup();
      const plain = app('a1', false);
      const a = accepted(plain);
      tokens(a.event_id, 'Hi', ' "there"');
      reply(a.event_id);
      send(plain, { type: 'event', agent_id: 'x', thread_id: 't', payload: {} });
      const b = plain.frames.at(-1)!;
      send(x, { type: 'error', event_id: b.event_id, error: 'boom', code: 'E' });
      const { event_id: e, session_key: key } = a;
      expect(plain.texts).to.deep.equal([
        `{"type":"accepted","event_id":"${e}","agent_id":"x","session_key":"${key}","status":"accepted"}`,
        `{"type":"token","event_id":"${e}","agent_id":"x","token":"Hi"}`,
        `{"type":"token","event_id":"${e}","agent_id":"x","token":" \\"there\\""}`,
        plain.texts[3],
        `{"type":"accepted","event_id":"${b.event_id}","agent_id":"x","session_key":"${key}","status":"accepted"}`,
        `{"type":"error","event_id":"${b.event_id}","agent_id":"x","error":"boom","code":"AGENT_ERROR"}`,
      ]);
      expect(plain.texts[3]).to.match(
        new RegExp(
          `^\\{"type":"reply","event_id":"${e}","agent_id":"x","thread_id":"t","reply":"Hi \\\\"there\\\\"","payload":\\{"q":1\\},"metadata":\\{"tokens_used":2,`,
        ),
      );
    });

    it('answers resume as an unknown message (INVALID_MESSAGE), well-formed or not, as before the extension', function () {
      const { app, accepted, resume, send } = setup();
      const plain = app('a1', false);
      const a = accepted(plain);
      const unknown = {
        type: 'error',
        error: 'Invalid resume: type: "resume" is not a message type of this endpoint.',
        code: 'INVALID_MESSAGE',
      };
      expect(resume(plain, { event_id: a.event_id, resume_token: 'A'.repeat(43) }, 0)).to.deep.equal([unknown]);
      send(plain, { type: 'resume', event_id: a.event_id });
      expect(plain.frames.at(-1)).to.deep.equal(unknown);
    });

    it('takes ?resume=1 from the handshake facts on the app endpoint only', function () {
      const { bridge } = setup();
      const frames: Frame[] = [];
      const socket = (id: number): Socket => ({
        id,
        send: (t) => frames.push(JSON.parse(t)),
        close() {},
        bufferedBytes: () => 0,
      });
      const facts = (path: string) => ({
        path,
        authorization: undefined,
        query: new URLSearchParams('token=rla_x_secret&resume=1'),
        address: undefined,
        resumable: true,
      });
      bridge.connect(socket(101), facts(ENDPOINT_PATHS.agent)); // refused (unknown token), and no resume field anywhere
      expect(frames).to.have.length(1);
      expect(frames[0]).to.include({ code: 'UNAUTHORIZED' });
    });
  });

  describe('a resumable connection (R2, R3)', function () {
    it("gets a different 256-bit resume token in each accepted, and numbers each event's tokens from 1", function () {
      const { app, accepted, tokens } = setup();
      const conn = app('a1', true);
      const a = accepted(conn);
      const b = accepted(conn);
      expect(a.resume_token).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(a.resume_token, 'base64url')).to.have.length(32);
      expect(b.resume_token).to.not.equal(a.resume_token);
      tokens(a.event_id, 'a1', 'a2');
      tokens(b.event_id, 'b1');
      tokens(a.event_id, 'a3');
      expect(seqs(conn.frames.filter((f) => f.type === 'token'))).to.deep.equal(['1:a1', '2:a2', '1:b1', '3:a3']);
    });
  });

  describe('resuming (R4)', function () {
    it('sends the fragments missed after a drop, then the live ones, then the reply built from all of them', function () {
      const { app, accepted, tokens, reply, drop, resume, bridge } = setup();
      const first = app('a1', true);
      const a = accepted(first);
      tokens(a.event_id, 'one ', 'two ', 'three ');
      drop(first);
      tokens(a.event_id, 'four ', 'five ');
      const second = app('a1', true);
      expect(seqs(resume(second, a, 2))).to.deep.equal(['3:three ', '4:four ', '5:five ']);
      tokens(a.event_id, 'six');
      reply(a.event_id);
      expect(seqs(second.frames.slice(-2))).to.deep.equal(['6:six', 'reply']);
      expect(second.frames.at(-1)!.reply).to.equal('one two three four five six');
      expect(bridge.stats().eventsInFlight).to.equal(0);
    });

    it('gives an event that ended while the app was away its missed fragments and its reply at once', function () {
      const { app, accepted, tokens, reply, drop, resume } = setup();
      const first = app('a1', true);
      const a = accepted(first);
      tokens(a.event_id, 'x', 'y');
      drop(first);
      reply(a.event_id, 'the content');
      const second = app('a1', true);
      const got = resume(second, a, 0);
      expect(seqs(got)).to.deep.equal(['1:x', '2:y', 'reply']);
      expect(got[2]!.reply).to.equal('the content');
    });

    it('keeps an error that ended the event too (AGENT_TIMEOUT), and a resume after every fragment gets only it', function () {
      const { app, accepted, tokens, drop, resume, clock } = setup({ agentTimeoutMs: 5_000 });
      const first = app('a1', true);
      const a = accepted(first);
      tokens(a.event_id, 'x');
      drop(first);
      clock.advance(5_000);
      expect(seqs(resume(app('a1', true), a, 1))).to.deep.equal(['AGENT_TIMEOUT']);
    });

    it('takes an event over from a connection that is still open: the old one gets nothing more of it', function () {
      const { app, accepted, tokens, reply, resume } = setup();
      const old = app('a1', true);
      const a = accepted(old);
      const other = accepted(old);
      tokens(a.event_id, 'x');
      const taker = app('a1', true);
      expect(seqs(resume(taker, a, 1))).to.deep.equal([]);
      tokens(a.event_id, 'y');
      tokens(other.event_id, 'z');
      reply(a.event_id);
      expect(seqs(taker.frames)).to.deep.equal(['2:y', 'reply']);
      expect(seqs(old.frames.filter((f) => f.event_id === a.event_id))).to.deep.equal(['accepted', '1:x']);
      expect(seqs(old.frames.slice(-1))).to.deep.equal(['1:z']); // its other event goes on there
    });

    it('can be resumed again after a second drop, from where the app stopped', function () {
      const { app, accepted, tokens, reply, drop, resume } = setup();
      const first = app('a1', true);
      const a = accepted(first);
      tokens(a.event_id, '1');
      drop(first);
      const second = app('a1', true);
      resume(second, a, 1);
      tokens(a.event_id, '2', '3');
      drop(second);
      tokens(a.event_id, '4');
      reply(a.event_id);
      const third = app('a1', true);
      const got = resume(third, a, 2);
      expect(seqs(got)).to.deep.equal(['3:3', '4:4', 'reply']);
      expect(got.at(-1)!.reply).to.equal('1234');
    });

    it('keeps an event in flight whatever its connection does, and an ended one for resumeWindowMs, then forgets it', function () {
      const { app, accepted, tokens, reply, drop, resume, clock, bridge } = setup({
        agentTimeoutMs: 10 * WINDOW_MS,
        idleCloseMs: 10 * WINDOW_MS,
      });
      const first = app('a1', true);
      const a = accepted(first);
      tokens(a.event_id, 'x');
      drop(first);
      clock.advance(3 * WINDOW_MS);
      expect(seqs(resume(app('a1', true), a, 0))).to.deep.equal(['1:x']);
      reply(a.event_id);
      clock.advance(WINDOW_MS - 1);
      expect(seqs(resume(app('a1', true), a, 1))).to.deep.equal(['reply']);
      expect(bridge.resumeStats()).to.include({ events: 1 });
      clock.advance(1);
      const late = resume(app('a1', true), a, 1);
      expect(late).to.deep.equal([
        {
          type: 'error',
          event_id: a.event_id,
          code: 'RESUME_GAP',
          error: `Event ${a.event_id} cannot be resumed: the bridge no longer keeps it (its resume window ended, or the bridge or the event's node restarted).`,
        },
      ]);
      expect(bridge.resumeStats()).to.deep.include({
        bytes: 0,
        events: 0,
        resumes: { resumed: 2, gap: 1, refused: 0, limited: 0 },
      });
    });

    it("keeps a resumable event's text when its connection drops (L15 does not discard it) and counts it in flight for its app (L13)", function () {
      const { app, accepted, tokens, reply, drop, resume, bridge, send } = setup({ maxEventsInFlightPerApp: 1 });
      const first = app('a1', true);
      const a = accepted(first);
      tokens(a.event_id, 'kept ', 'text');
      drop(first);
      expect(bridge.limitCounters().textDiscarded.app_gone).to.equal(0);
      const second = app('a1', true);
      send(second, { type: 'event', agent_id: 'x', thread_id: 't', payload: {} });
      expect(second.frames.at(-1)).to.include({ code: 'TOO_MANY_EVENTS' });
      reply(a.event_id);
      expect(resume(second, a, 2).at(-1)).to.include({ type: 'reply', reply: 'kept text' });
    });
  });

  describe('refusals (R5) and gaps (R6)', function () {
    it('refuses a wrong token, an event sent without ?resume=1 and an after_seq ahead, and the event goes on', function () {
      const { app, accepted, tokens, reply, resume, bridge } = setup();
      const holder = app('a1', true);
      const a = accepted(holder);
      tokens(a.event_id, 'x');
      const plainEvent = accepted(app('a1', false));
      const id = a.event_id;
      const mine = app('a1', true);
      expect(resume(mine, a, 0, 'B'.repeat(43))).to.deep.equal([
        {
          type: 'error',
          event_id: id,
          code: 'RESUME_REFUSED',
          error: `This connection cannot resume event ${id}: the resume token does not match.`,
        },
      ]);
      expect(resume(mine, plainEvent, 0, 'B'.repeat(43))).to.deep.equal([
        {
          type: 'error',
          event_id: plainEvent.event_id,
          code: 'RESUME_REFUSED',
          error: `Event ${plainEvent.event_id} was not sent on a resumable connection (?resume=1); it cannot be resumed.`,
        },
      ]);
      expect(resume(mine, a, 2)).to.deep.equal([
        {
          type: 'error',
          event_id: id,
          code: 'RESUME_REFUSED',
          error: `Event ${id} has sent 1 fragments; after_seq 2 is beyond them.`,
        },
      ]);
      tokens(id, 'y');
      reply(id);
      expect(seqs(holder.frames.slice(-2))).to.deep.equal(['2:y', 'reply']);
      expect(bridge.resumeStats().resumes).to.deep.equal({ resumed: 0, gap: 0, refused: 3, limited: 0 });
    });

    it("answers a resume of another app's event exactly as one of an event that does not exist, and the event goes on", function () {
      const { app, accepted, tokens, reply, resume, bridge } = setup();
      const holder = app('a1', true);
      const live = accepted(holder);
      tokens(live.event_id, 'x');
      const plain = accepted(app('a1', false));
      const ended = accepted(holder);
      reply(ended.event_id, 'kept for the window');
      const unknown = (id: string) => [
        {
          type: 'error',
          event_id: id,
          code: 'RESUME_GAP',
          error: `Event ${id} cannot be resumed: the bridge no longer keeps it (its resume window ended, or the bridge or the event's node restarted).`,
        },
      ];
      const stranger = app('a2', true);
      const never = { event_id: '01JQ7ZK3M4N5P6Q7R8S9T0V1W2', resume_token: 'A'.repeat(43) };
      expect(resume(stranger, never, 0)).to.deep.equal(unknown(never.event_id));
      // With the right token, the wrong one, or a position ahead: the answer of an unknown event, nothing more.
      for (const [event, token, after] of [
        [live, live.resume_token, 0],
        [live, 'B'.repeat(43), 0],
        [live, live.resume_token, 9],
        [plain, 'B'.repeat(43), 0],
        [ended, ended.resume_token, 0],
      ] as const) {
        expect(resume(stranger, event, after, token), `${event.event_id} ${after}`).to.deep.equal(
          unknown(event.event_id),
        );
      }
      tokens(live.event_id, 'y');
      expect(seqs(holder.frames.slice(-1))).to.deep.equal(['2:y']);
      expect(seqs(resume(app('a1', true), ended, 0))).to.deep.equal(['reply']); // its owner still has it whole
      expect(bridge.resumeStats().resumes).to.deep.equal({ resumed: 1, gap: 6, refused: 0, limited: 0 });
    });

    it('answers RESUME_GAP for an event it never had, and refuses a malformed resume with INVALID_MESSAGE', function () {
      const { app, resume, send } = setup();
      const conn = app('a1', true);
      const id = '01JQ7ZK3M4N5P6Q7R8S9T0V1W2';
      expect(resume(conn, { event_id: id, resume_token: 'A'.repeat(43) }, 0)[0]).to.deep.equal({
        type: 'error',
        event_id: id,
        code: 'RESUME_GAP',
        error: `Event ${id} cannot be resumed: the bridge no longer keeps it (its resume window ended, or the bridge or the event's node restarted).`,
      });
      send(conn, { type: 'resume', event_id: id, resume_token: 'short', after_seq: 0 });
      expect(conn.frames.at(-1)).to.include({ type: 'error', code: 'INVALID_MESSAGE' });
      expect(conn.frames.at(-1)!.error).to.match(/^Invalid resume: resume_token/);
    });

    it('ends the event for the app on a gap: its later frames go nowhere, a second resume is a gap too, the agent is not told', function () {
      const max = cost('ab', true) + cost('cd', false);
      const { app, accepted, tokens, reply, drop, resume, x, ended } = setup({ streamedTextMaxBytes: max });
      const first = app('a1', true);
      const a = accepted(first);
      tokens(a.event_id, 'ab', 'cd', 'ef'); // 'ab' goes: the event keeps two fragments
      drop(first);
      const second = app('a1', true);
      const gap = resume(second, a, 0);
      expect(gap).to.deep.equal([
        {
          type: 'error',
          event_id: a.event_id,
          agent_id: 'x',
          code: 'RESUME_GAP',
          error: `Event ${a.event_id} cannot be resumed after fragment 0: the fragments before 2 were dropped (the event's fragments were over ${max} bytes).`,
        },
      ]);
      const agentFrames = x.frames.length;
      tokens(a.event_id, 'gh');
      reply(a.event_id, 'done');
      expect(second.frames).to.have.length(1);
      expect(x.frames).to.have.length(agentFrames);
      expect(ended.at(-1)).to.include({ event_id: a.event_id, outcome: 'replied' });
      expect(resume(app('a1', true), a, 3)[0]).to.include({ code: 'RESUME_GAP' });
    });
  });

  describe('bounds (R7)', function () {
    it("keeps an event's last streamedTextMaxBytes of fragments: a resume after the dropped ones still works", function () {
      const { app, accepted, tokens, drop, resume, bridge } = setup({
        streamedTextMaxBytes: cost('aaaa', true) + 2 * cost('bbbb', false),
      });
      const first = app('a1', true);
      const a = accepted(first);
      tokens(a.event_id, 'aaaa', 'bbbb', 'cccc', 'dd');
      drop(first);
      expect(seqs(resume(app('a1', true), a, 1))).to.deep.equal(['2:bbbb', '3:cccc', '4:dd']);
      expect(bridge.resumeStats().dropped).to.deep.equal({
        event_limit: cost('aaaa', true),
        app_limit: 0,
        node_limit: 0,
      });
      expect(bridge.resumeStats().bytes).to.equal(2 * cost('bbbb', false) + cost('dd', false));
    });

    it('counts what a fragment holds: 4,096 × U+0001 as its 24,578 escaped bytes, and a flood of empty fragments meets the bound', function () {
      const control = '\u0001'.repeat(4096);
      expect(cost(control, true)).to.equal(24_578 + LIMITS.resumeFragmentIndexBytes + LIMITS.resumeBufferOverheadBytes);
      const { app, accepted, tokens, drop, resume, bridge } = setup({
        resumeBufferPerAppMaxBytes: LIMITS.frameMaxBytes,
        fairShares: { ...DEFAULT_FAIR_SHARES, fragmentsPerSecond: 0 },
      });
      const first = app('a1', true);
      const a = accepted(first);
      tokens(a.event_id, control);
      expect(bridge.resumeStats().bytes).to.equal(cost(control, true));
      const b = accepted(first);
      const empties = 100_000; // 10 bytes and a share of a buffer each: over the event's 976,000 bytes
      for (let i = 0; i < empties; i++) tokens(b.event_id, '');
      const { bytes, dropped } = bridge.resumeStats();
      expect(bytes).to.be.at.most(LIMITS.streamedTextMaxBytes + cost(control, true));
      expect(dropped.event_limit).to.be.above(0);
      drop(first);
      const back = resume(app('a1', true), b, empties - 10);
      expect(seqs(back)).to.deep.equal(Array.from({ length: 10 }, (_, i) => `${empties - 9 + i}:`));
      expect(resume(app('a1', true), b, 0)[0]).to.include({ code: 'RESUME_GAP' });
    });

    it("drops an app's oldest kept bytes over its bound, those of ended events before those in flight, and leaves other apps alone", function () {
      const fragment = 'f'.repeat(LONE);
      const F = cost(fragment, true);
      // What an ended event's reply counts (its frame, its buffer, its record), measured on a bridge of its own.
      const probe = setup();
      const probed = probe.accepted(probe.app('a1', true));
      const before = probe.bridge.resumeStats().bytes;
      probe.reply(probed.event_id, 'r');
      const R = probe.bridge.resumeStats().bytes - before;
      expect(R)
        .to.be.above(LIMITS.resumeBufferOverheadBytes + LIMITS.resumeEndedEventBytes)
        .and.below(F);
      const max = 7 * F + R + F / 2;
      const { app, accepted, tokens, reply, resume, bridge } = setup({ resumeBufferPerAppMaxBytes: max });
      const conn = app('a1', true);
      const inFlight = accepted(conn);
      tokens(inFlight.event_id, fragment, fragment, fragment); // 3 F, the oldest
      const done = accepted(conn);
      tokens(done.event_id, fragment);
      reply(done.event_id, 'r'); // its reply frame and fragment: ended, so the first to go
      const other = accepted(app('a2', true));
      tokens(other.event_id, fragment, fragment);
      const latest = accepted(conn);
      for (let i = 0; i < 4; i++) tokens(latest.event_id, fragment); // 3 F + the ended one's F and reply + 4 F: over
      expect(bridge.resumeStats().dropped.app_limit).to.equal(F);
      expect(resume(app('a1', true), done, 0)[0]).to.include({ code: 'RESUME_GAP' });
      expect(seqs(resume(app('a1', true), inFlight, 0))).to.have.length(3); // untouched: the ended event's bytes sufficed
      expect(seqs(resume(app('a2', true), other, 0))).to.have.length(2);
      for (let i = 0; i < 5; i++) tokens(latest.event_id, fragment); // now the event in flight must give its oldest
      expect(resume(app('a1', true), inFlight, 0)[0]).to.include({ code: 'RESUME_GAP' });
      expect(bridge.resumeStats().bytes).to.be.at.most(max + 2 * F); // a1 within its bound, and a2's two fragments
    });

    it("drops under the node's bound across apps, counts what each bound dropped, and logs a burst at a time", function () {
      const fragment = 'n'.repeat(LONE);
      const F = cost(fragment, true);
      const { app, accepted, tokens, resume, bridge, logged } = setup({ resumeBufferMaxBytes: 5 * F });
      const first = accepted(app('a1', true));
      tokens(first.event_id, fragment, fragment, fragment);
      const second = accepted(app('a2', true));
      tokens(second.event_id, fragment, fragment, fragment, fragment);
      expect(bridge.resumeStats()).to.deep.include({
        bytes: 5 * F,
        dropped: { event_limit: 0, app_limit: 0, node_limit: 2 * F },
      });
      expect(seqs(resume(app('a1', true), first, 2))).to.deep.equal([`3:${fragment}`]);
      expect(resume(app('a1', true), first, 1)[0]).to.include({ code: 'RESUME_GAP' });
      expect(resume(app('a1', true), first, 1)[0]!.error).to.include(
        `this node's kept streams were over ${5 * F} bytes`,
      );
      const lines = logged.filter(([, m]) => m.startsWith('resume buffer'));
      expect(lines).to.have.length(1); // the first of the burst; the rest at the end of the window
      expect(lines[0]![0]).to.deep.equal({ bytes: F, reasons: { node_limit: F } });
    });
  });
});
