// The app client's half of the cancel extension (S2, S3, S8) without a network: `handle.cancel()` and a send's
// AbortSignal end the handle at once with EventCancelledError and send `cancel` once the event has an id; the
// bridge's answer to it, and whatever late frames of the event still come, never reach another call.
import { expect } from 'chai';
import { EventCancelledError } from '../../src/sdk/app-client.js';
import {
  AGENT,
  accepted,
  closeClients,
  collect,
  collectUntilError,
  connected,
  error,
  eventId,
  reconnect,
  reply,
  resumableAccepted,
  resumeToken,
  token,
} from '../helpers/app-client-harness.js';

const input = { agentId: AGENT, threadId: 't', payload: { q: 1 } };
const sendOn = (h: Awaited<ReturnType<typeof connected>>) => h.client.send(input);
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('app client: cancel (S2)', function () {
  afterEach(closeClients);

  it('ends an accepted event at once with EventCancelledError and sends cancel for it', async function () {
    const { client, socket } = await connected();
    const handle = client.send(input);
    socket.receive(accepted(eventId(1)));
    socket.receive(token(eventId(1), 'Hello '));
    await handle.accepted;
    handle.cancel();
    const { got, error: err } = await collectUntilError(handle.tokens);
    expect(got).to.deep.equal(['Hello ']);
    expect(err).to.be.instanceOf(EventCancelledError);
    expect(err).to.include({ code: 'CANCELLED', eventId: eventId(1), agentId: AGENT });
    expect(await handle.reply.catch((e: unknown) => e)).to.equal(err);
    expect(socket.sentOfType('cancel')).to.deep.equal([{ type: 'cancel', event_id: eventId(1) }]);
  });

  it("sends the cancel of an event not yet accepted with its accepted, and the bridge's answers pair with no other send", async function () {
    const { client, socket } = await connected();
    const first = client.send(input);
    const second = client.send(input);
    first.cancel();
    expect((await first.reply.catch((e: unknown) => e)) as EventCancelledError).to.be.instanceOf(EventCancelledError);
    expect(socket.sentOfType('cancel')).to.deep.equal([]);
    socket.receive(accepted(eventId(1)));
    expect(socket.sentOfType('cancel')).to.deep.equal([{ type: 'cancel', event_id: eventId(1) }]);
    // Late frames of the cancelled event, then the bridge's CANCELLED: none of them is the second send's answer.
    socket.receive(token(eventId(1), 'late'));
    socket.receive(error(eventId(1), 'CANCELLED', { agent_id: AGENT }));
    socket.receive(accepted(eventId(2)));
    socket.receive(reply(eventId(2), 'second'));
    expect((await second.reply).reply).to.equal('second');
    expect(await collect(second.tokens)).to.deep.equal([]);
  });

  it('ignores a CANCEL_REFUSED that follows the reply that won the race (S8)', async function () {
    const { client, socket } = await connected();
    const handle = client.send(input);
    socket.receive(accepted(eventId(1)));
    await handle.accepted;
    handle.cancel();
    const next = client.send(input);
    socket.receive(reply(eventId(1), 'too late'));
    socket.receive(error(eventId(1), 'CANCEL_REFUSED'));
    socket.receive(accepted(eventId(2)));
    expect((await next.accepted).event_id).to.equal(eventId(2));
    expect(await handle.reply.catch((e: unknown) => e)).to.be.instanceOf(EventCancelledError);
  });

  it('does nothing for an event that has ended', async function () {
    const { client, socket } = await connected();
    const handle = client.send(input);
    socket.receive(accepted(eventId(1)));
    socket.receive(reply(eventId(1), 'done'));
    await handle.reply;
    handle.cancel();
    expect(socket.sentOfType('cancel')).to.deep.equal([]);
  });

  describe('AbortSignal in the send options', function () {
    it('cancels the event when the signal is aborted', async function () {
      const { client, socket } = await connected();
      const controller = new AbortController();
      const handle = client.send(input, { signal: controller.signal });
      socket.receive(accepted(eventId(1)));
      await handle.accepted;
      controller.abort();
      expect(await handle.reply.catch((e: unknown) => e)).to.be.instanceOf(EventCancelledError);
      expect(socket.sentOfType('cancel')).to.deep.equal([{ type: 'cancel', event_id: eventId(1) }]);
    });

    it('sends nothing when the signal is already aborted', async function () {
      const { client, socket } = await connected();
      const handle = client.send(input, { signal: AbortSignal.abort() });
      const err = await handle.accepted.catch((e: unknown) => e);
      expect(err).to.be.instanceOf(EventCancelledError);
      expect(err).to.include({ eventId: undefined });
      await tick();
      expect(socket.sentOfType('event')).to.deep.equal([]);
    });
  });
  describe('while the event waits to be resumed (S2, R4)', function () {
    const resumeOf = (id: string, afterSeq: number) => ({
      type: 'resume',
      event_id: id,
      resume_token: resumeToken(id),
      after_seq: afterSeq,
    });

    it('takes the event back on the next connection and cancels it there, ignoring what comes of it', async function () {
      const h = await connected();
      const handle = sendOn(h);
      h.socket.receive(resumableAccepted(eventId(1)));
      h.socket.receive(token(eventId(1), 'one ', 1));
      await handle.accepted;
      h.socket.drop(1006);
      handle.cancel();
      expect(await handle.reply.catch((e: unknown) => e)).to.be.instanceOf(EventCancelledError);
      const fresh = reconnect(h);
      expect(fresh.sent.filter((m) => m.type === 'resume' || m.type === 'cancel')).to.deep.equal([
        resumeOf(eventId(1), 1),
        { type: 'cancel', event_id: eventId(1) },
      ]);
      // The resumed stream and the cancel's answer reach no later send.
      const next = sendOn(h);
      fresh.receive(token(eventId(1), 'two ', 2));
      fresh.receive(error(eventId(1), 'CANCELLED', { agent_id: AGENT }));
      fresh.receive(accepted(eventId(2)));
      fresh.receive(reply(eventId(2), 'second'));
      expect((await next.reply).reply).to.equal('second');
      const third = reconnect(h);
      expect(third.sentOfType('resume'), 'nothing left to take back').to.deep.equal([]);
    });

    it('tries again after the time given when the resume is refused for the load, then stops once cancelled', async function () {
      const h = await connected();
      const handle = sendOn(h);
      h.socket.receive(resumableAccepted(eventId(1)));
      await handle.accepted;
      const fresh = reconnect(h);
      fresh.receive(error(eventId(1), 'TOO_MANY_REQUESTS', { metadata: { retry_after_seconds: 2 } }));
      handle.cancel();
      expect(fresh.sentOfType('cancel'), 'at once, behind a resume').to.have.length(1);
      fresh.receive(error(eventId(1), 'TOO_MANY_REQUESTS', { metadata: { retry_after_seconds: 2 } }));
      fresh.receive(error(eventId(1), 'CANCEL_REFUSED'));
      h.clock.advance(2_000);
      expect(fresh.sentOfType('resume')).to.have.length(3);
      expect(fresh.sentOfType('cancel')).to.have.length(2);
      fresh.receive(error(eventId(1), 'CANCELLED', { agent_id: AGENT }));
      h.clock.advance(10_000);
      expect(fresh.sentOfType('cancel'), 'the cancel took').to.have.length(2);
    });

    it('lets the event go when its resume finds it ended (a reply first, then CANCEL_REFUSED)', async function () {
      const h = await connected();
      const handle = sendOn(h);
      h.socket.receive(resumableAccepted(eventId(1)));
      await handle.accepted;
      h.socket.drop(1006);
      handle.cancel();
      const fresh = reconnect(h);
      fresh.receive(reply(eventId(1), 'done before the cancel'));
      fresh.receive(error(eventId(1), 'CANCEL_REFUSED'));
      expect(await handle.reply.catch((e: unknown) => e)).to.be.instanceOf(EventCancelledError);
      const third = reconnect(h);
      expect(third.sentOfType('resume')).to.deep.equal([]);
      expect(third.sentOfType('cancel')).to.deep.equal([]);
    });
  });
});
