// One app resumes an ended stream over and over: a resume is a small request whose answer is the whole stream again.
// Where the bridge offers the resume extension, how much it sends back, and how it meters it, is observed.
import { LIMITS } from '../../../generated/index.js';
import { connectAgent, sendJson } from './agent.js';
import { connectApp } from './app.js';
import { NotApplicable, sleep, tally, type ResourceCase } from './types.js';

const FRAGMENT = 'r'.repeat(4000);
// Half of what a bridge keeps of one event's text (L14): what a bridge keeps for a resume holds the fragments' JSON
// and its own overhead besides (R7), and a stream it could not keep whole is a gap, not a replay.
const FRAGMENTS = Math.floor(LIMITS.streamedTextMaxBytes / 2 / FRAGMENT.length);

export const resumeFlood: ResourceCase = {
  id: 'resource.resume-flood',
  title: 'a flood of resumes of one ended 488 KB stream (resume extension)',
  async run(ctx) {
    const agent = await connectAgent(ctx);
    const first = await connectApp(ctx, { resumable: true });
    sendJson(ctx, first.ws, {
      type: 'event',
      agent_id: ctx.target.agentId,
      thread_id: 'rob-resume-flood',
      payload: {},
    });
    const accepted = await first.next((f) => f.type === 'accepted' || f.type === 'error', ctx.timeoutMs);
    if (accepted?.type !== 'accepted') throw new Error(`set-up: the event got ${JSON.stringify(accepted)}`);
    const token = accepted.resume_token;
    const eventId = await agent.nextEvent(ctx.timeoutMs);
    if (typeof token !== 'string') {
      if (eventId) sendJson(ctx, agent.ws, { type: 'reply', event_id: eventId, content: 'ok', done: true });
      throw new NotApplicable('the target does not offer the resume extension (no resume_token in accepted)');
    }
    if (!eventId) throw new Error(`set-up: the event did not reach the agent within ${ctx.timeoutMs} ms`);
    for (let i = 0; i < FRAGMENTS; i++) sendJson(ctx, agent.ws, { type: 'token', event_id: eventId, token: FRAGMENT });
    sendJson(ctx, agent.ws, { type: 'reply', event_id: eventId, content: 'ok', done: true });
    const ended = await first.next(
      (f) => f.event_id === eventId && (f.type === 'reply' || f.type === 'error'),
      4 * ctx.timeoutMs,
    );
    if (ended?.type !== 'reply')
      throw new Error(`set-up: the stream ended with ${JSON.stringify(ended)?.slice(0, 200)}`);
    first.ws.terminate();

    const n = ctx.amounts.resumes;
    const answers = { replays: 0, errors: [] as string[] };
    const app = await connectApp(ctx, {
      resumable: true,
      onFrame: (f) => {
        if (f.type === 'reply') answers.replays++;
        else if (f.type === 'error') {
          if (!answers.errors.includes(String(f.code))) ctx.note(`first ${String(f.code)}: ${JSON.stringify(f)}`);
          answers.errors.push(String(f.code));
        }
      },
    });
    ctx.note(
      `the stream of event ${eventId} (${FRAGMENTS} fragments of 4000 bytes) ended; a new connection resumes it ${n} times`,
    );
    const resume = JSON.stringify({ type: 'resume', event_id: eventId, resume_token: token, after_seq: 0 });
    const started = performance.now();
    let sentBytes = 0;
    for (let i = 0; i < n && performance.now() - started < ctx.amounts.holdMs; i++) {
      ctx.budget.send(resume.length);
      app.ws.send(resume);
      sentBytes += resume.length;
      if (i === Math.floor(n / 2)) void ctx.probe();
      if (i % 100 === 99) await sleep(1);
    }
    const deadline = performance.now() + ctx.amounts.holdMs + 2 * ctx.timeoutMs;
    while (answers.replays + answers.errors.length < n && performance.now() < deadline && !app.closed) await sleep(20);
    ctx.observe('resumes sent', n);
    ctx.observe('bytes sent', sentBytes);
    ctx.observe('bytes received', app.bytes);
    ctx.observe('amplification (received/sent)', Math.round(app.bytes / Math.max(1, sentBytes)));
    ctx.observe('streams sent again in full', answers.replays);
    ctx.observe('errors', tally(answers.errors));
    ctx.observe('unanswered', Math.max(0, n - answers.replays - answers.errors.length));
    if (app.closed) ctx.observe('the app connection', app.closed);
  },
};
