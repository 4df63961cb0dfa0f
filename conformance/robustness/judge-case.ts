// One robustness case, run and judged: its set-up event, its frames (placeholders filled), the expectation of the
// run's profile, the sender's connection still answering ping, and the canary (ROB-001); a crash is reported as such.
import { Ledger } from '../ledger.js';
import { Transcript } from '../actor.js';
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

export async function runCase(c: InputCase, ctx: CaseContext): Promise<CaseRun> {
  const { seed, profile, options, conns, budget, fixtures, caseNumber } = ctx;
  const got = (f: Record<string, unknown> | undefined) =>
    f ? JSON.stringify(f).slice(0, 200) : `nothing within ${options.timeoutMs} ms`;
  let stopped: string | undefined;
  let latencyMs: number | undefined;
  const caseTranscript = new Transcript();
  const caseLedger = new Ledger();
  conns.transcript.current = caseTranscript;
  conns.ledger.current = caseLedger;
  const started = performance.now();
  const failures: Failure[] = [];
  const fail = (requirement: string, reason: string) => failures.push({ requirements: [requirement], reason });
  const checked: string[] = [];
  const note = (text: string) => caseTranscript.add('suite', 'note', text);
  const e = expectationOf(c, profile);
  const keeps = KEEPS_CONNECTION[c.endpoint];
  note(
    `case ${c.id} (seed ${seed}, ${c.source}, ${c.category}${c.message ? `, ${c.message}` : ''}, ${c.conforms ? 'a message by the open schema' : 'not a message by the open schema'}): ${c.why}`,
  );
  note(
    `expects ${e.kind}${'code' in e ? ` ${e.code}` : ''} (${e.requirement}${e === c.ours ? ', our decision' : ''})${c.mayAccept ? '; the bridge may take the frame' : ''}${c.mayClose ? '; the bridge may close the connection' : ''}`,
  );
  let crashed = false;
  try {
    budget.time();
    const t = fixtures.target;
    const ids = { agent_id: t.agentId, app_id: t.appId, event_id: '${event_id}' };
    // The agent must be there for an event to be accepted: connect it first whenever an event may flow.
    const agent = await conns.connect('agent1', 'agent', t.agentToken);
    const app = await conns.connect('app1', 'app', t.appToken);
    await conns.drain(agent);
    await conns.drain(app);
    if (c.needsEvent) {
      // A fresh event for every case that needs one, on its own thread.
      const event = JSON.stringify({
        type: 'event',
        agent_id: t.agentId,
        thread_id: `rob-${caseNumber}`,
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

    // (a) the expectation
    /** An event the app's frame started: the target agent ends it (reply), so that it does not linger. */
    const endStarted = async () => {
      const delivered = await conns.waitFor(agent, (f) => f.type === 'event', options.timeoutMs);
      if (delivered) conns.end(agent, delivered.event_id);
    };
    if (e.kind === 'error' || e.kind === 'any-error') {
      const errors: string[] = [];
      const answer = await conns.waitFor(
        sender,
        (f) => {
          if (f.type !== 'error') return false;
          errors.push(String(f.code));
          return e.kind === 'any-error' || f.code === e.code;
        },
        options.timeoutMs,
      );
      if (answer) checked.push(e.requirement);
      else
        fail(
          e.requirement,
          `sent ${c.frames.length} frame(s), expected ${e.kind === 'error' ? `error ${e.code}` : 'an error'}; got ${errors.length ? `error ${errors.join(', ')}` : sender.closeInfo ? `a close (${sender.closeInfo.code} ${sender.closeInfo.reason})` : `nothing within ${options.timeoutMs} ms`}`,
        );
    } else if (e.kind === 'error-or-silence') {
      // With mayAccept the bridge may take the frame: an app's event `accepted`, an agent's frame forwarded (a
      // token, a reply, or an agent's error, which reaches the app as an error for the event).
      const quietMs = Math.min(options.timeoutMs, 500);
      // Sequential waits: a waiter left running would take the next frames (the pong) from its connection.
      const forwarded =
        c.mayAccept && c.endpoint === 'agent'
          ? await conns.waitFor(app, (f) => f.event_id === ids.event_id && isForward(f), quietMs)
          : undefined;
      const answer =
        forwarded ??
        (await conns.waitFor(sender, (f) => f.type === 'error' || (!!c.mayAccept && f.type === 'accepted'), quietMs));
      if (answer?.type === 'error' && !forwarded) note(`answered with error ${String(answer.code)}`);
      else if (answer) note(`the bridge took the frame (${String(answer.type)}): allowed here`);
      else note(`no error (silence is allowed here)`);
      if (answer?.type === 'accepted') await endStarted();
      if (!c.mayClose) checked.push(e.requirement);
    } else if (c.endpoint === 'app') {
      let answer = await conns.waitFor(app, (f) => f.type === 'accepted' || f.type === 'error', options.timeoutMs);
      const last = c.frames.at(-1);
      const after = retryAfterMs(answer);
      if (after && last && 'text' in last) {
        // The rate is the bridge's to set (#rate-limit): the frame is sent again after the delay it gives.
        await new Promise((resolve) => setTimeout(resolve, after));
        answer = (await conns.sendEvent(app, fillPlaceholders(last.text, ids), options.timeoutMs)).answer;
      }
      if (answer?.type === 'accepted') {
        checked.push(e.requirement);
        await endStarted();
      } else fail(e.requirement, `expected accepted; got ${got(answer)}`);
    } else {
      // An agent's frame taken: its token, or its whole reply, reaches the app.
      const answer = await conns.waitFor(
        app,
        (f) => f.type === 'token' || f.type === 'reply' || f.type === 'error',
        options.timeoutMs,
      );
      if (answer && answer.type !== 'error') checked.push(e.requirement);
      else fail(e.requirement, `expected the agent's ${c.message ?? 'frame'} forwarded to the app; got ${got(answer)}`);
    }
    // End the case's event (it may be ended already: then an error comes, which the next case drains). AGT-009: an
    // event a bad agent frame did not end still ends with the agent's reply, which reaches the app.
    if (c.needsEvent) {
      const endedAlready = caseTranscript.lines.some(
        (l) => l.actor === app.name && l.direction === 'received' && endsEvent(l.text, ids.event_id),
      );
      conns.end(agent, ids.event_id);
      if (!endedAlready && c.endpoint === 'agent' && agent.isOpen) {
        const ended = await conns.waitFor(
          app,
          (f) => f.event_id === ids.event_id && (f.type === 'reply' || f.type === 'error'),
          options.timeoutMs,
        );
        if (ended?.type === 'reply') checked.push(keeps);
        else
          fail(
            keeps,
            `after this case the agent's reply to its event in flight did not reach the app (got ${got(ended)}): a bad agent frame does not cost the agent its events`,
          );
      }
    }

    // (b) the sender's connection still answers ping
    if (sender.isOpen) {
      budget.send(15);
      sender.send({ type: 'ping' });
      const pong = await conns.waitFor(sender, (f) => f.type === 'pong', options.timeoutMs);
      if (pong) {
        if (!c.mayClose) checked.push(keeps);
      } else if (!c.mayClose) fail(keeps, `the ${c.endpoint} connection did not answer ping after the case`);
      else note('no pong after the case');
    } else if (!c.mayClose) {
      fail(
        keeps,
        `the bridge closed the ${c.endpoint} connection (${sender.closeInfo?.code} ${sender.closeInfo?.reason}) after this case: errors about one message do not end the connection`,
      );
    } else
      note(
        `the connection was closed (${sender.closeInfo?.code} ${sender.closeInfo?.reason}): allowed here; the next case reconnects`,
      );
    // An event the bridge took from an app's frame although the case expected an error: ended now.
    if (c.endpoint === 'app') await conns.drain(agent);
    // (c) the canary
    const latency = await canary(conns, fixtures.canary, c.id, options);
    if (typeof latency === 'number') {
      latencyMs = latency;
      note(`canary answered in ${latency} ms`);
      checked.push(CANARY);
    } else fail(CANARY, latency);
  } catch (err) {
    if (err instanceof CapReached) {
      const stopped = `${err.message} (during case ${c.id})`;
      return { result: { ...untested(c, profile, stopped), transcript: caseTranscript.lines }, stopped };
    }
    // A handshake refused or a set-up that did not go: the case is not judged unless the target is gone.
    note(`stopped: ${(err as Error).message}`);
    if (!failures.length) failures.push({ requirements: [], reason: (err as Error).message });
  }
  if (failures.length && !(await targetAlive(options.url, options.timeoutMs, budget).catch(() => false))) {
    crashed = true;
    const reason = `the target stopped answering after this case (seed ${seed}, case ${c.id})`;
    failures.push({ requirements: [CANARY], reason });
    stopped = reason;
  }
  const real = failures.filter((f) => f.requirements.length);
  const setup = failures.find((f) => !f.requirements.length);
  const all = [...real, ...caseLedger.failures];
  const failed = new Set(all.flatMap((f) => f.requirements));
  const held = [...new Set([...checked, ...caseLedger.checkedRequirements])].filter((id) => !failed.has(id));
  const result: ScenarioResult = {
    id: c.id,
    file: 'robustness/cases.ts',
    title: titleOf(c),
    requirements: requirementsOfCase(c, profile),
    status: all.length ? 'failed' : setup ? 'errored' : 'passed',
    ...(all.length
      ? { reason: all[0]!.reason, failures: all, failedRequirements: [...failed] }
      : setup
        ? { reason: setup.reason, stop: { reason: setup.reason } }
        : {}),
    checked: held,
    durationMs: Math.round(performance.now() - started),
    transcript: caseTranscript.lines,
  };
  return { result, ...(latencyMs === undefined ? {} : { latencyMs }), ...(stopped ? { stopped } : {}), crashed };
}
