// One app sends events as fast as it can while its agent answers each at once: how many the bridge takes, how it
// refuses the rest (a rate limit, a bound on events in flight), and whether another organization is still served.
import { connectAgent, sendJson } from './agent.js';
import { connectApp } from './app.js';
import { sleep, SUITE_QUEUE_MAX, tally, type ResourceCase } from './types.js';

export const eventFlood: ResourceCase = {
  id: 'resource.event-flood',
  title: 'a flood of events from one app',
  async run(ctx) {
    const n = ctx.amounts.events;
    const agent = await connectAgent(ctx, (eventId) =>
      sendJson(ctx, agent.ws, { type: 'reply', event_id: eventId, content: 'ok', done: true }),
    );
    const answers = { accepted: 0, replies: 0, errors: [] as string[] };
    const app = await connectApp(ctx, {
      onFrame: (f) => {
        if (f.type === 'accepted') answers.accepted++;
        else if (f.type === 'reply') answers.replies++;
        else if (f.type === 'error') answers.errors.push(String(f.code));
      },
    });
    ctx.note(`app1 sends ${n} events as fast as it can; agent1 answers each at once`);
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      sendJson(ctx, app.ws, {
        type: 'event',
        agent_id: ctx.target.agentId,
        thread_id: `rob-flood-${i % 50}`,
        payload: { n: i },
      });
      if (i === Math.floor(n / 2)) void ctx.probe();
      if (app.ws.bufferedAmount > SUITE_QUEUE_MAX) await sleep(5);
    }
    const sentMs = Math.round(performance.now() - started);
    // Every event ends: accepted then a reply or an error, or refused at once with an error.
    const deadline = performance.now() + ctx.amounts.holdMs + 4 * ctx.timeoutMs;
    const ended = () => answers.replies + answers.errors.length >= n;
    while (!ended() && performance.now() < deadline && !app.closed) await sleep(20);
    const tookMs = Math.round(performance.now() - started);
    ctx.observe('events sent', n);
    ctx.observe('sent in (ms)', sentMs);
    ctx.observe('accepted', answers.accepted);
    ctx.observe('replies', answers.replies);
    ctx.observe('errors', tally(answers.errors));
    ctx.observe('unanswered', Math.max(0, n - answers.replies - answers.errors.length));
    ctx.observe('all answered in (ms)', ended() ? tookMs : `not within ${tookMs}`);
    if (app.closed) ctx.observe('the app connection', app.closed);
  },
};
