// One robustness case, run and judged: its set-up event, its frames (placeholders filled), the expectation of the
// run's profile, the sender's connection still answering ping, and the canary (ROB-001); a crash is reported as such.
import { Ledger } from '../ledger.js';
import { Transcript, type Actor } from '../actor.js';
import type { Failure } from '../outcome.js';
import type { ScenarioResult } from '../results.js';
import { FRAME_REQUIREMENTS, type Profile } from '../scenario.js';
import { canary } from './canary.js';
import { fillPlaceholders, KEEPS_CONNECTION, type Expectation, type InputCase } from './cases.js';
import { retryAfterMs, type Connections, type Fixture } from './connections.js';
import { CapReached, targetAlive, type Budget } from './safety.js';

/** Another organization is still served after each case. */
export const CANARY = 'ROB-001';

/** What a case is judged by in a profile: its stricter `ours` (a decision) with --profile bridge, else `expect`. */
export const expectationOf = (c: InputCase, profile: Profile): Expectation =>
  profile === 'bridge' && c.ours ? c.ours : c.expect;

/** A case's title in the reports: its category, then what is wrong with the input. */
export const titleOf = (c: InputCase) => `[${c.category}] ${c.why}`;

/** The case's requirements: its expectation's, the connection staying (unless it may close), the canary, MSG-…. */
export const requirementsOfCase = (c: InputCase, profile: Profile) => [
  ...new Set([
    // A case that may close the connection is judged by the canary alone.
    ...(c.mayClose ? [] : [expectationOf(c, profile).requirement, KEEPS_CONNECTION[c.endpoint]]),
    CANARY,
    FRAME_REQUIREMENTS.protocol,
    ...(profile === 'bridge' ? [FRAME_REQUIREMENTS.decision] : []),
  ]),
];

export const untested = (c: InputCase, profile: Profile, why: string): ScenarioResult => ({
  id: c.id,
  file: 'robustness/cases.ts',
  title: titleOf(c),
  requirements: requirementsOfCase(c, profile),
  status: 'skipped',
  reason: `not run: ${why}`,
  durationMs: 0,
  transcript: [],
});

/** A frame the bridge sends an app for an agent's frame it took: a token, a reply, an agent's error. */
const isForward = (f: Record<string, unknown>) => f.type === 'token' || f.type === 'reply' || f.type === 'error';

/** Whether a frame's text, as the app received it, ends the event (its reply or an error for it). */
function endsEvent(text: string, eventId: string): boolean {
  try {
    const f = JSON.parse(text) as Record<string, unknown>;
    return f.event_id === eventId && (f.type === 'reply' || f.type === 'error');
  } catch {
    return false;
  }
}

export interface CaseContext {
  seed: number;
  profile: Profile;
  options: { url: string; timeoutMs: number; canaryMs: number };
  conns: Connections;
  budget: Budget;
  fixtures: { target: Fixture; canary: Fixture };
  /** The case's number in the run (its set-up event's thread). */
  caseNumber: number;
}

export interface CaseRun {
  result: ScenarioResult;
  /** The canary's latency after the case. */
  latencyMs?: number;
  /** Why the run stops here (a cap reached, the target gone). */
  stopped?: string;
  /** The target stopped answering after this case. */
  crashed?: boolean;
}

/** What one case gathers as it runs: its transcript and frame-rule findings, its failures and what held. */
class CaseState {
  readonly transcript = new Transcript();
  readonly ledger = new Ledger();
  readonly failures: Failure[] = [];
  readonly checked: string[] = [];
  readonly started = performance.now();
  latencyMs: number | undefined;

  fail(requirement: string, reason: string): void {
    this.failures.push({ requirements: [requirement], reason });
  }

  note(text: string): void {
    this.transcript.add('suite', 'note', text);
  }
}

/** The connections and ids a case works with. */
interface Stage {
  app: Actor;
  agent: Actor;
  sender: Actor;
  ids: { agent_id: string; app_id: string; event_id: string };
}

export async function runCase(c: InputCase, ctx: CaseContext): Promise<CaseRun> {
  const s = new CaseState();
  ctx.conns.transcript.current = s.transcript;
  ctx.conns.ledger.current = s.ledger;
  introduce(c, ctx.profile, ctx.seed, s);
  try {
    ctx.budget.time();
    const stage = await setUp(c, ctx);
    await judgeExpectation(c, expectationOf(c, ctx.profile), stage, ctx, s);
    if (c.needsEvent) await endCaseEvent(c, stage, ctx, s);
    await judgeConnection(c, stage.sender, ctx, s);
    // An event the bridge took from an app's frame although the case expected an error: ended now.
    if (c.endpoint === 'app') await ctx.conns.drain(stage.agent);
    const latency = await canary(ctx.conns, ctx.fixtures.canary, c.id, ctx.options);
    if (typeof latency === 'number') {
      s.latencyMs = latency;
      s.note(`canary answered in ${latency} ms`);
      s.checked.push(CANARY);
    } else s.fail(CANARY, latency);
  } catch (err) {
    if (err instanceof CapReached) {
      const stopped = `${err.message} (during case ${c.id})`;
      return { result: { ...untested(c, ctx.profile, stopped), transcript: s.transcript.lines }, stopped };
    }
    // A handshake refused or a set-up that did not go: the case is not judged unless the target is gone.
    s.note(`stopped: ${(err as Error).message}`);
    if (!s.failures.length) s.failures.push({ requirements: [], reason: (err as Error).message });
  }
  return ending(c, ctx, s);
}

function introduce(c: InputCase, profile: Profile, seed: number, s: CaseState): void {
  const e = expectationOf(c, profile);
  const shape = c.conforms ? 'a message by the open schema' : 'not a message by the open schema';
  s.note(
    `case ${c.id} (seed ${seed}, ${c.source}, ${c.category}${c.message ? `, ${c.message}` : ''}, ${shape}): ${c.why}`,
  );
  const allowed = `${c.mayAccept ? '; the bridge may take the frame' : ''}${c.mayClose ? '; the bridge may close the connection' : ''}`;
  s.note(
    `expects ${e.kind}${'code' in e ? ` ${e.code}` : ''} (${e.requirement}${e === c.ours ? ', our decision' : ''})${allowed}`,
  );
}

/** Connects the target pair (the agent first: an event must find it), starts the case's event, sends its frames. */
async function setUp(c: InputCase, ctx: CaseContext): Promise<Stage> {
  const { conns, fixtures, options } = ctx;
  const t = fixtures.target;
  const ids = { agent_id: t.agentId, app_id: t.appId, event_id: '${event_id}' };
  const agent = await conns.connect('agent1', 'agent', t.agentToken);
  const app = await conns.connect('app1', 'app', t.appToken);
  await conns.drain(agent);
  await conns.drain(app);
  if (c.needsEvent) {
    // A fresh event for every case that needs one, on its own thread.
    const event = JSON.stringify({
      type: 'event',
      agent_id: t.agentId,
      thread_id: `rob-${ctx.caseNumber}`,
      payload: { case: c.id },
    });
    const { answer: accepted } = await conns.sendEvent(app, event, options.timeoutMs);
    const delivered = await conns.waitFor(agent, (f) => f.type === 'event', options.timeoutMs);
    if (accepted?.type !== 'accepted' || !delivered)
      throw new Error(
        `set-up: the event for the case was not ${accepted?.type !== 'accepted' ? 'accepted' : 'delivered'}`,
      );
    ids.event_id = String(delivered.event_id);
  }
  const sender = c.endpoint === 'app' ? app : agent;
  for (const frame of c.frames)
    conns.send(sender, 'text' in frame ? { text: fillPlaceholders(frame.text, ids) } : frame);
  return { app, agent, sender, ids };
}

const got = (f: Record<string, unknown> | undefined, timeoutMs: number) =>
  f ? JSON.stringify(f).slice(0, 200) : `nothing within ${timeoutMs} ms`;

/** (a) What the bridge answered the case's frames, against the expectation of the run's profile. */
async function judgeExpectation(
  c: InputCase,
  e: Expectation,
  stage: Stage,
  ctx: CaseContext,
  s: CaseState,
): Promise<void> {
  if (e.kind === 'error' || e.kind === 'any-error') return judgeError(c, e, stage, ctx, s);
  if (e.kind === 'error-or-silence') return judgeErrorOrSilence(c, e, stage, ctx, s);
  if (c.endpoint === 'app') return judgeAppAccepted(c, e, stage, ctx, s);
  // An agent's frame taken: its token, or its whole reply, reaches the app.
  const answer = await ctx.conns.waitFor(stage.app, (f) => isForward(f), ctx.options.timeoutMs);
  if (answer && answer.type !== 'error') s.checked.push(e.requirement);
  else
    s.fail(
      e.requirement,
      `expected the agent's ${c.message ?? 'frame'} forwarded to the app; got ${got(answer, ctx.options.timeoutMs)}`,
    );
}

async function judgeError(
  c: InputCase,
  e: Extract<Expectation, { kind: 'error' | 'any-error' }>,
  { sender }: Stage,
  ctx: CaseContext,
  s: CaseState,
): Promise<void> {
  const errors: string[] = [];
  const answer = await ctx.conns.waitFor(
    sender,
    (f) => {
      if (f.type !== 'error') return false;
      errors.push(String(f.code));
      return e.kind === 'any-error' || f.code === e.code;
    },
    ctx.options.timeoutMs,
  );
  if (answer) return void s.checked.push(e.requirement);
  const instead = errors.length
    ? `error ${errors.join(', ')}`
    : sender.closeInfo
      ? `a close (${sender.closeInfo.code} ${sender.closeInfo.reason})`
      : `nothing within ${ctx.options.timeoutMs} ms`;
  s.fail(
    e.requirement,
    `sent ${c.frames.length} frame(s), expected ${e.kind === 'error' ? `error ${e.code}` : 'an error'}; got ${instead}`,
  );
}

/**
 * Any error, or nothing. With mayAccept the bridge may take the frame: an app's event `accepted`, an agent's frame
 * forwarded (a token, a reply, or an agent's error, which reaches the app as an error for the event).
 */
async function judgeErrorOrSilence(
  c: InputCase,
  e: Expectation,
  stage: Stage,
  ctx: CaseContext,
  s: CaseState,
): Promise<void> {
  const { conns, options } = ctx;
  const quietMs = Math.min(options.timeoutMs, 500);
  // Sequential waits: a waiter left running would take the next frames (the pong) from its connection.
  const forwarded =
    c.mayAccept && c.endpoint === 'agent'
      ? await conns.waitFor(stage.app, (f) => f.event_id === stage.ids.event_id && isForward(f), quietMs)
      : undefined;
  const answer =
    forwarded ??
    (await conns.waitFor(stage.sender, (f) => f.type === 'error' || (!!c.mayAccept && f.type === 'accepted'), quietMs));
  if (answer?.type === 'error' && !forwarded) s.note(`answered with error ${String(answer.code)}`);
  else if (answer) s.note(`the bridge took the frame (${String(answer.type)}): allowed here`);
  else s.note(`no error (silence is allowed here)`);
  if (answer?.type === 'accepted') await endStarted(stage, ctx);
  if (!c.mayClose) s.checked.push(e.requirement);
}

/** A boundary value on the app endpoint: `accepted`, after the delay a rate limit asks for if it asks. */
async function judgeAppAccepted(
  c: InputCase,
  e: Expectation,
  stage: Stage,
  ctx: CaseContext,
  s: CaseState,
): Promise<void> {
  const { conns, options } = ctx;
  let answer = await conns.waitFor(stage.app, (f) => f.type === 'accepted' || f.type === 'error', options.timeoutMs);
  const last = c.frames.at(-1);
  const after = retryAfterMs(answer);
  if (after && last && 'text' in last) {
    // The rate is the bridge's to set (#rate-limit): the frame is sent again after the delay it gives.
    await new Promise((resolve) => setTimeout(resolve, after));
    answer = (await conns.sendEvent(stage.app, fillPlaceholders(last.text, stage.ids), options.timeoutMs)).answer;
  }
  if (answer?.type !== 'accepted')
    return s.fail(e.requirement, `expected accepted; got ${got(answer, options.timeoutMs)}`);
  s.checked.push(e.requirement);
  await endStarted(stage, ctx);
}

/** An event the app's frame started: the target agent ends it (reply), so that it does not linger. */
async function endStarted(stage: Stage, ctx: CaseContext): Promise<void> {
  const delivered = await ctx.conns.waitFor(stage.agent, (f) => f.type === 'event', ctx.options.timeoutMs);
  if (delivered) ctx.conns.end(stage.agent, delivered.event_id);
}

/**
 * Ends the case's event (it may be ended already: then an error comes, which the next case drains). AGT-009: an
 * event a bad agent frame did not end still ends with the agent's reply, which reaches the app.
 */
async function endCaseEvent(c: InputCase, { app, agent, ids }: Stage, ctx: CaseContext, s: CaseState): Promise<void> {
  const endedAlready = s.transcript.lines.some(
    (l) => l.actor === app.name && l.direction === 'received' && endsEvent(l.text, ids.event_id),
  );
  ctx.conns.end(agent, ids.event_id);
  if (endedAlready || c.endpoint !== 'agent' || !agent.isOpen) return;
  const keeps = KEEPS_CONNECTION[c.endpoint];
  const ended = await ctx.conns.waitFor(
    app,
    (f) => f.event_id === ids.event_id && (f.type === 'reply' || f.type === 'error'),
    ctx.options.timeoutMs,
  );
  // The case's own agent error may have ended the event, its AGENT_ERROR reaching the app after the look above.
  const byTheAgent = ended?.type === 'error' && (ended.code === 'AGENT_ERROR' || ended.code === 'AGENT_TIMEOUT');
  if (ended?.type === 'reply' || byTheAgent) return void s.checked.push(keeps);
  s.fail(
    keeps,
    `after this case the agent's reply to its event in flight did not reach the app (got ${got(ended, ctx.options.timeoutMs)}): a bad agent frame does not cost the agent its events`,
  );
}

/** (b) The sender's connection still answers ping, unless the case may close it. */
async function judgeConnection(c: InputCase, sender: Actor, ctx: CaseContext, s: CaseState): Promise<void> {
  const keeps = KEEPS_CONNECTION[c.endpoint];
  const closed = `${sender.closeInfo?.code} ${sender.closeInfo?.reason}`;
  if (!sender.isOpen) {
    if (c.mayClose) return s.note(`the connection was closed (${closed}): allowed here; the next case reconnects`);
    return s.fail(
      keeps,
      `the bridge closed the ${c.endpoint} connection (${closed}) after this case: errors about one message do not end the connection`,
    );
  }
  ctx.budget.send(15);
  sender.send({ type: 'ping' });
  const pong = await ctx.conns.waitFor(sender, (f) => f.type === 'pong', ctx.options.timeoutMs);
  if (c.mayClose) return pong ? undefined : s.note('no pong after the case');
  if (pong) s.checked.push(keeps);
  else s.fail(keeps, `the ${c.endpoint} connection did not answer ping after the case`);
}

/** The case's result: its failures (and a crash, when the target stopped answering after it), or what held. */
async function ending(c: InputCase, ctx: CaseContext, s: CaseState): Promise<CaseRun> {
  let crashed = false;
  let stopped: string | undefined;
  if (
    s.failures.length &&
    !(await targetAlive(ctx.options.url, ctx.options.timeoutMs, ctx.budget).catch(() => false))
  ) {
    crashed = true;
    stopped = `the target stopped answering after this case (seed ${ctx.seed}, case ${c.id})`;
    s.failures.push({ requirements: [CANARY], reason: stopped });
  }
  const setup = s.failures.find((f) => !f.requirements.length);
  const all = [...s.failures.filter((f) => f.requirements.length), ...s.ledger.failures];
  const failed = new Set(all.flatMap((f) => f.requirements));
  const held = [...new Set([...s.checked, ...s.ledger.checkedRequirements])].filter((id) => !failed.has(id));
  const result: ScenarioResult = {
    id: c.id,
    file: 'robustness/cases.ts',
    title: titleOf(c),
    requirements: requirementsOfCase(c, ctx.profile),
    status: all.length ? 'failed' : setup ? 'errored' : 'passed',
    ...(all.length
      ? { reason: all[0]!.reason, failures: all, failedRequirements: [...failed] }
      : setup
        ? { reason: setup.reason, stop: { reason: setup.reason } }
        : {}),
    checked: held,
    durationMs: Math.round(performance.now() - s.started),
    transcript: s.transcript.lines,
  };
  return {
    result,
    ...(s.latencyMs === undefined ? {} : { latencyMs: s.latencyMs }),
    ...(stopped ? { stopped } : {}),
    crashed,
  };
}
