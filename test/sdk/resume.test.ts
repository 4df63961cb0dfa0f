// The app client's use of the resume extension (R9) against a scripted bridge: FakeSockets the test plays the
// bridge on, and a frozen clock that runs the reconnect backoff. What the caller holds (handle.tokens,
// handle.reply) must go on across a dropped connection as if nothing happened, and end only on a real gap.
import { expect } from 'chai';
import { CLOSE_CODES, LIMITS } from '../../generated/index.js';
import { ConnectionLostError, StreamGapError, type AppClient } from '../../src/sdk/app-client.js';
import { rejection } from '../helpers/rejection.js';
import {
  AGENT,
  TOKEN,
  accepted,
  closeClients,
  collect,
  collectUntilError,
  connected,
  error,
  eventId,
  reconnect,
  record,
  reply,
  resumableAccepted,
  resumeToken,
  settled,
  token,
} from '../helpers/app-client-harness.js';

/** Reads a handle's fragments as they come, as a caller would, from before the drop to the end. */
function reading(tokens: AsyncIterable<string>): { got: string[]; done: Promise<void> } {
  const got: string[] = [];
  const done = (async () => {
    for await (const t of tokens) got.push(t);
  })();
  done.catch(() => {});
  return { got, done };
}

const send = (client: AppClient) => client.send({ agentId: AGENT, threadId: 't', payload: {} });

describe('app client: resumable streams (R9)', function () {
  afterEach(closeClients);

  describe('asking for them', function () {
    it('opens its connections with ?resume=1 by default, the token in the header', async function () {
      const { socket } = await connected();
      const url = new URL(socket.url);
      expect(url.pathname).to.equal('/v1/ws/app');
      expect(url.searchParams.get('resume')).to.equal('1');
      expect(socket.headers).to.deep.equal({ authorization: `Bearer ${TOKEN}` });
    });

    it("adds ?resume=1 next to ?token= with carrier: 'query', keeping the base URL's own query", async function () {
      const { socket } = await connected({ carrier: 'query', url: 'wss://bridge.test/v1?tenant=a' });
      const url = new URL(socket.url);
      expect(Object.fromEntries(url.searchParams)).to.deep.equal({ tenant: 'a', resume: '1', token: TOKEN });
    });

    it('opens plain connections with resume: false, whatever the base URL says', async function () {
      for (const carrier of ['header', 'query'] as const) {
        const { socket } = await connected({ resume: false, carrier, url: 'wss://bridge.test/v1?resume=1' });
        expect(new URL(socket.url).searchParams.has('resume'), carrier).to.equal(false);
      }
    });

    it('asks again on every reconnect', async function () {
      const h = await connected();
      const fresh = reconnect(h);
      expect(new URL(fresh.url).searchParams.get('resume')).to.equal('1');
    });
  });

  describe('after a drop', function () {
    it('resumes a stream cut in the middle: the fragments go on from the next one, none twice, then the reply', async function () {
      const h = await connected();
      const seen = record(h.client);
      const handle = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      const reader = reading(handle.tokens);
      h.socket.receive(token(eventId(1), 'One ', 1));
      h.socket.receive(token(eventId(1), 'two ', 2));
      await new Promise((resolve) => setImmediate(resolve)); // the reader takes what has come
      expect(reader.got).to.deep.equal(['One ', 'two ']);

      h.socket.drop(1006);
      expect(await settled(handle.reply), 'still waiting during the backoff').to.equal('pending');
      expect(seen.map(([name]) => name)).to.include.members(['disconnected', 'reconnecting']);
      h.clock.advance(LIMITS.reconnectBaseDelayMs);
      const fresh = h.last();
      fresh.open();
      expect(fresh.sentOfType('resume'), 'not before the bridge accepted the connection').to.deep.equal([]);
      fresh.receive({ type: 'pong' });
      expect(fresh.sentOfType('resume')).to.deep.equal([
        { type: 'resume', event_id: eventId(1), resume_token: resumeToken(eventId(1)), after_seq: 2 },
      ]);

      // A fragment sent again is never delivered twice; the next ones are.
      fresh.receive(token(eventId(1), 'two ', 2));
      fresh.receive(token(eventId(1), 'three ', 3));
      fresh.receive(token(eventId(1), 'four', 4));
      fresh.receive(reply(eventId(1), 'One two three four'));
      await reader.done;
      expect(reader.got).to.deep.equal(['One ', 'two ', 'three ', 'four']);
      expect(reader.got.join('')).to.equal((await handle.reply).reply);
      expect(await collect(handle.tokens), 'a late reader too').to.deep.equal(reader.got);
      expect(h.client.state).to.equal('open');
    });

    it('takes back a reply the bridge sent into the dead connection, with the fragments it missed', async function () {
      const h = await connected();
      const handle = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      h.socket.receive(token(eventId(1), 'a', 1));
      const fresh = reconnect(h);
      expect(fresh.sentOfType('resume')[0]).to.include({ event_id: eventId(1), after_seq: 1 });
      // The event ended while the app was away: everything at once.
      fresh.receive(token(eventId(1), 'b', 2));
      fresh.receive(token(eventId(1), 'c', 3));
      fresh.receive(reply(eventId(1), 'abc'));
      expect(await handle.text()).to.equal('abc');
      expect(await collect(handle.tokens)).to.deep.equal(['a', 'b', 'c']);
    });

    it('resumes from 0 an event that had no fragment yet, and again after each further drop from where it got to', async function () {
      const h = await connected();
      const handle = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      let socket = reconnect(h);
      expect(socket.sentOfType('resume')[0]).to.include({ after_seq: 0 });
      const expected: string[] = [];
      for (let drop = 1; drop <= 3; drop++) {
        for (let i = 0; i < 2; i++) {
          const seq = expected.length + 1;
          expected.push(`f${seq} `);
          socket.receive(token(eventId(1), `f${seq} `, seq));
        }
        socket = reconnect(h);
        expect(socket.sentOfType('resume'), `after drop ${drop}`).to.deep.equal([
          { type: 'resume', event_id: eventId(1), resume_token: resumeToken(eventId(1)), after_seq: expected.length },
        ]);
      }
      socket.receive(reply(eventId(1), expected.join('')));
      expect(await collect(handle.tokens)).to.deep.equal(expected);
      expect(await handle.text()).to.equal(expected.join(''));
    });

    it('sends the resumes before anything the caller sends on the new connection', async function () {
      const h = await connected();
      send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      h.client.once('connected', () => send(h.client));
      const fresh = reconnect(h);
      expect(fresh.sent.map((m) => m.type)).to.deep.equal(['ping', 'resume', 'event']);
    });

    it('keeps pairing answers with sends while resumed events stream: a resume brings no accepted', async function () {
      const h = await connected();
      const first = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      const fresh = reconnect(h);
      const second = send(h.client);
      fresh.receive(token(eventId(1), 'x', 1));
      fresh.receive(resumableAccepted(eventId(2)));
      fresh.receive(token(eventId(2), 'y', 1));
      fresh.receive(reply(eventId(1), 'x'));
      fresh.receive(reply(eventId(2), 'y'));
      expect((await first.accepted).event_id).to.equal(eventId(1));
      expect((await second.accepted).event_id).to.equal(eventId(2));
      expect(await first.text()).to.equal('x');
      expect(await collect(second.tokens)).to.deep.equal(['y']);
    });

    it('still fails with ConnectionLostError what cannot be taken back: a send not yet accepted, a discover', async function () {
      const h = await connected();
      const resumable = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      const unanswered = send(h.client);
      const discovering = h.client.discover();
      h.socket.drop(1006);
      expect(await rejection(unanswered.reply)).to.be.instanceOf(ConnectionLostError);
      expect(await rejection(discovering)).to.be.instanceOf(ConnectionLostError);
      expect(await settled(resumable.reply)).to.equal('pending');
    });
  });

  describe('when the rest cannot be had', function () {
    it('rejects with StreamGapError on RESUME_GAP, after the fragments that came, and leaves other events alone', async function () {
      const h = await connected();
      const gone = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      const other = send(h.client);
      h.socket.receive(resumableAccepted(eventId(2)));
      h.socket.receive(token(eventId(1), 'half', 1));
      const fresh = reconnect(h);
      const waiting = send(h.client); // its answer must not be taken by the resume's error
      const text = `Event ${eventId(1)} cannot be resumed: the bridge no longer keeps it (its resume window ended, or the bridge or the event's node restarted).`;
      fresh.receive(error(eventId(1), 'RESUME_GAP', { error: text, agent_id: AGENT }));

      const err = await rejection(gone.reply);
      expect(err).to.be.instanceOf(StreamGapError);
      expect(err).to.include({ name: 'StreamGapError', code: 'RESUME_GAP', eventId: eventId(1), agentId: AGENT });
      expect(err.message).to.equal(`${text} The stream stops after fragment 1; the rest of the answer is lost.`);
      const { got, error: streamError } = await collectUntilError(gone.tokens);
      expect(got).to.deep.equal(['half']);
      expect(streamError).to.equal(err);

      fresh.receive(accepted(eventId(3)));
      expect((await waiting.accepted).event_id).to.equal(eventId(3));
      fresh.receive(reply(eventId(2), 'fine'));
      expect(await other.text()).to.equal('fine');
    });

    it('rejects with StreamGapError on RESUME_REFUSED too, saying the bridge refused', async function () {
      const h = await connected();
      const handle = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      const fresh = reconnect(h);
      const text = `This connection cannot resume event ${eventId(1)}: the resume token does not match.`;
      fresh.receive(error(eventId(1), 'RESUME_REFUSED', { error: text }));
      const err = await rejection(handle.reply);
      expect(err).to.be.instanceOf(StreamGapError);
      expect(err).to.include({ code: 'RESUME_REFUSED', eventId: eventId(1) });
      expect(err.message).to.equal(
        `Event ${eventId(1)}'s stream cannot be completed after fragment 0: the bridge refused to resume it (${text})`,
      );
    });

    it("sends a resume refused for its organization's share (TOO_MANY_REQUESTS) again after the time given, the event untouched", async function () {
      const h = await connected();
      const handle = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      h.socket.receive(token(eventId(1), 'one ', 1));
      const fresh = reconnect(h);
      const resume = { type: 'resume', event_id: eventId(1), resume_token: resumeToken(eventId(1)), after_seq: 1 };
      expect(fresh.sentOfType('resume')).to.deep.equal([resume]);
      fresh.receive(error(eventId(1), 'TOO_MANY_REQUESTS', { metadata: { retry_after_seconds: 0.5 } }));
      expect(await settled(handle.reply)).to.equal('pending');
      h.clock.advance(499);
      expect(fresh.sentOfType('resume')).to.have.length(1);
      h.clock.advance(1);
      expect(fresh.sentOfType('resume')).to.deep.equal([resume, resume]);
      fresh.receive(token(eventId(1), 'two', 2));
      fresh.receive(reply(eventId(1), 'one two'));
      expect((await handle.reply).reply).to.equal('one two');
      expect(await collect(handle.tokens)).to.deep.equal(['one ', 'two']);
    });

    it('takes a refused resume back on the next connection when this one drops while it waits', async function () {
      const h = await connected();
      const handle = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      const fresh = reconnect(h);
      fresh.receive(error(eventId(1), 'TOO_MANY_REQUESTS', { metadata: { retry_after_seconds: 5 } }));
      const third = reconnect(h);
      expect(third.sentOfType('resume')).to.have.length(1);
      h.clock.advance(5_000);
      expect(third.sentOfType('resume'), 'the old wait is over').to.have.length(1);
      third.receive(reply(eventId(1), 'done'));
      expect((await handle.reply).reply).to.equal('done');
    });

    it('ignores a resume error naming an event it does not wait for', async function () {
      const h = await connected();
      const handle = send(h.client);
      h.socket.receive(error(eventId(9), 'RESUME_GAP'));
      h.socket.receive(accepted(eventId(1)));
      expect((await handle.accepted).event_id).to.equal(eventId(1));
    });

    it('rejects with ConnectionLostError when reconnecting gives up', async function () {
      const h = await connected({ reconnect: { maxRetries: 2 } });
      const handle = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      h.socket.receive(token(eventId(1), 'x', 1));
      h.socket.drop(1006);
      h.clock.advance(LIMITS.reconnectBaseDelayMs);
      h.last().drop(1006);
      expect(await settled(handle.reply)).to.equal('pending');
      h.clock.advance(2 * LIMITS.reconnectBaseDelayMs);
      h.last().drop(1006);
      const err = await rejection(handle.reply);
      expect(err).to.be.instanceOf(ConnectionLostError);
      expect(h.client.state).to.equal('closed');
      expect((await collectUntilError(handle.tokens)).got).to.deep.equal(['x']);
    });

    it('rejects with ConnectionLostError when the bridge refuses the reconnect for good (TOKEN_REVOKED)', async function () {
      const h = await connected();
      const handle = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      h.socket.drop(1006);
      h.clock.advance(LIMITS.reconnectBaseDelayMs);
      h.last().refuse('TOKEN_REVOKED', 'revoked');
      const err = await rejection(handle.reply);
      expect(err).to.be.instanceOf(ConnectionLostError);
      expect(err).to.include({ closeCode: CLOSE_CODES.TOKEN_REVOKED, reason: 'TOKEN_REVOKED' });
    });

    it('rejects with ConnectionLostError when closed while waiting to resume', async function () {
      const h = await connected();
      const handle = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      h.socket.drop(1006);
      await h.client.close();
      const err = await rejection(handle.reply);
      expect(err).to.be.instanceOf(ConnectionLostError);
      expect(err.message).to.match(/^The client was closed/);
    });
  });

  describe('without the extension', function () {
    it('ends the events of a bridge that gave no resume token with ConnectionLostError on a drop, and resumes nothing', async function () {
      const h = await connected();
      const handle = send(h.client);
      h.socket.receive(accepted(eventId(1)));
      h.socket.receive(token(eventId(1), 'partial'));
      h.socket.drop(1006);
      const err = await rejection(handle.reply);
      expect(err).to.be.instanceOf(ConnectionLostError);
      expect((await collectUntilError(handle.tokens)).got).to.deep.equal(['partial']);
      const fresh = reconnect(h);
      expect(fresh.sentOfType('resume')).to.deep.equal([]);
    });

    it('ends with ConnectionLostError the events it resumed on a bridge that answers resume as an unknown message (a node without the extension)', async function () {
      const h = await connected();
      const first = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      h.socket.receive(token(eventId(1), 'half', 1));
      const second = send(h.client);
      h.socket.receive(resumableAccepted(eventId(2)));
      const fresh = reconnect(h);
      expect(fresh.sentOfType('resume')).to.have.length(2);
      const waiting = send(h.client);
      const text = 'Invalid resume: type: "resume" is not a message type of this endpoint.';
      fresh.receive(error(undefined, 'INVALID_MESSAGE', { error: text }));
      fresh.receive(error(undefined, 'INVALID_MESSAGE', { error: text }));
      for (const handle of [first, second]) {
        const err = await rejection(handle.reply);
        expect(err).to.be.instanceOf(ConnectionLostError);
        expect(err.message).to.include('does not resume streams').and.to.include(text);
      }
      fresh.receive(accepted(eventId(3)));
      expect((await waiting.accepted).event_id, 'the errors answered the resumes, not the send').to.equal(eventId(3));
    });

    it('with resume: false, never resumes, even if a bridge sent a resume token', async function () {
      const h = await connected({ resume: false });
      const handle = send(h.client);
      h.socket.receive(resumableAccepted(eventId(1)));
      h.socket.drop(1006);
      expect(await rejection(handle.reply)).to.be.instanceOf(ConnectionLostError);
      expect(reconnect(h).sentOfType('resume')).to.deep.equal([]);
    });
  });
});
