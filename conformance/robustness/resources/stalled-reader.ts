// An app that stops reading while its agent streams to it: what the bridge queues for it, and whether it slows the
// agent, tells it, or closes the app. A bridge that keeps every unread frame holds what the agent streams.
import { connectAgent, sendJson } from './agent.js';
import { clientFrame, closeAtEnd, endpointOf, openRaw, upgradeRaw } from './sockets.js';
import { sleep, SUITE_QUEUE_MAX, tally, type ResourceCase } from './types.js';

const FRAGMENT = 'x'.repeat(4000);

export const stalledReader: ResourceCase = {
  id: 'resource.stalled-reader',
  title: 'an app that stops reading while its agent streams to it',
  async run(ctx) {
    const e = endpointOf(ctx.url, 'app');
    const agent = await connectAgent(ctx);
    ctx.budget.connect();
    const app = await openRaw({ ...e, localAddress: undefined }, ctx.timeoutMs);
    ctx.hold(() => app.destroy());
    app.on('error', () => {});
    const status = await upgradeRaw(app, e, ctx.target.appToken, ctx.timeoutMs);
    if (status !== 101) throw new Error(`set-up: the app's upgrade got HTTP ${status}`);
    const event = { type: 'event', agent_id: ctx.target.agentId, thread_id: 'rob-stalled-reader', payload: {} };
    const eventFrame = clientFrame(0x1, Buffer.from(JSON.stringify(event)));
    ctx.budget.send(eventFrame.length);
    app.write(eventFrame); // and never reads: the socket stays paused
    const eventId = await agent.nextEvent(ctx.timeoutMs);
    if (!eventId) throw new Error(`set-up: the event did not reach the agent within ${ctx.timeoutMs} ms`);
    ctx.note(
      `event ${eventId} delivered; the app stopped reading; the agent streams up to ${ctx.amounts.streamBytes} bytes in 4000-byte fragments for ${ctx.amounts.holdMs} ms`,
    );

    const started = performance.now();
    let sent = 0;
    let waitedMs = 0;
    const stream = (async () => {
      while (sent < ctx.amounts.streamBytes && performance.now() - started < ctx.amounts.holdMs && !agent.closed) {
        if (agent.ws.bufferedAmount > SUITE_QUEUE_MAX) {
          waitedMs += 10; // the bridge is not reading the agent: backpressure
          await sleep(10);
          continue;
        }
        sendJson(ctx, agent.ws, { type: 'token', event_id: eventId, token: FRAGMENT });
        sent += FRAGMENT.length;
        if (sent % (64 * FRAGMENT.length) === 0) await sleep(0);
      }
    })();
    await sleep(ctx.amounts.holdMs / 2);
    await ctx.probe();
    await stream;
    ctx.observe('bytes of fragments the agent wrote', sent - agent.ws.bufferedAmount);
    ctx.observe('agent held back (ms)', waitedMs);
    ctx.observe('errors to the agent', tally(agent.errors));
    if (agent.closed) ctx.observe('the agent connection', agent.closed);
    if (!agent.closed) sendJson(ctx, agent.ws, { type: 'reply', event_id: eventId, content: '', done: true });

    // The app reads again: what the bridge had kept for it, and how its connection ended if it did.
    const received: Buffer[] = [];
    let bytes = 0;
    app.on('data', (d: Buffer) => {
      bytes += d.length;
      received.push(d);
      if (received.length > 64) received.splice(0, received.length - 64); // only the last frames matter
    });
    const ended = new Promise<boolean>((resolve) => app.once('close', () => resolve(true)));
    app.resume();
    const closedWithin = await Promise.race([ended, sleep(Math.min(ctx.timeoutMs, 3_000)).then(() => false)]);
    const close = closedWithin ? closeAtEnd(Buffer.concat(received)) : undefined;
    ctx.observe('bytes the app read once it read again', bytes);
    ctx.observe('the app connection', closedWithin ? `closed: ${close ?? 'without a close frame'}` : 'still open');
  },
};
