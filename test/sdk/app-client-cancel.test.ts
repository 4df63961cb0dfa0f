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
  reply,
  token,
} from '../helpers/app-client-harness.js';

const input = { agentId: AGENT, threadId: 't', payload: { q: 1 } };
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
});
