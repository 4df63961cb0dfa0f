// `bridge-conformance robustness --url ws://host:port/v1 …`: a seeded campaign of hostile input (cases.ts) against
// any bridge. Each case is one scenario result: what it sent, what it expected, what came; its requirements are the
// case's own (the generator names them), ERR-010 (the sender's connection still answers ping) and ROB-001 (another
// organization, the canary, is still served). The verdict goes through judge() like the other roles'. Safe by
// default: loopback targets only (unless --i-own-this-target), caps on connections, bytes and time, printed first.
import { randomInt } from 'node:crypto';
import type { ClientKind } from '../../generated/index.js';
import { Actor, Transcript, type TranscriptLine } from '../actor.js';
import { Ledger } from '../ledger.js';
import type { Failure } from '../outcome.js';
import { checkProvisioner, checkUrl, PreflightError, probeEndpoint, probeNodes } from '../preflight.js';
import type { Provisioner } from '../provision/provisioner.js';
import type { RunResult, ScenarioResult } from '../results.js';
import { judge } from '../results.js';
import { FRAME_REQUIREMENTS, inProfile, loadRequirements, type Profile, type Requirement } from '../scenario.js';
import { suiteLine, suiteVersion } from '../suite-version.js';
import { Target } from '../target.js';
import { fillPlaceholders, KEEPS_CONNECTION, type Expectation, type InputCase } from './cases.js';

/** Another organization is still served after each case. */
const CANARY = 'ROB-001';

export const CAP_DEFAULTS = { maxConnections: 500, maxBytes: 50_000_000, maxDurationMs: 10 * 60_000 } as const;

export interface RobustnessOptions {
  url: string;
  adminUrl?: string;
  adminToken?: string;
  provision?: string;
  seed?: number;
  cases?: number;
  canaryMs: number;
  timeoutMs: number;
  iOwnThisTarget?: boolean;
  maxConnections: number;
  maxBytes: number;
  maxDurationMs: number;
  grep?: string;
  exclude?: string;
  list: boolean;
  profile: Profile;
  reportJson?: string;
  junit?: string;
  html?: string;
  expectedFailures?: string;
}

/** What cli.ts lends (no import circle): its provisioning, selection, baseline and reports, and the generator. */
export interface RobustnessHelpers {
  provisionerFor(options: RobustnessOptions, target: Target, firstNode: string): Provisioner;
  selected<T extends { id: string; title: string; requirements: string[] }>(
    all: T[],
    options: Pick<RobustnessOptions, 'grep' | 'exclude'>,
  ): T[];
  baselineOf(options: RobustnessOptions): Parameters<typeof judge>[2];
  finish(result: RunResult, options: RobustnessOptions): number;
  requirementsOf(role: 'robustness', profile: Profile): Requirement[];
  /** The case generator; by default conformance/robustness/cases.ts. */
  generate?: (options: { seed: number; cases?: number }) => InputCase[];
}

/** The target must be on this machine unless its owner says otherwise. */
export function checkLoopback(url: string, iOwnIt: boolean | undefined): void {
  if (iOwnIt) return;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)) return;
  throw new PreflightError(
    `robustness mode sends hostile input: ${host} is not loopback (127.0.0.0/8, ::1, localhost); pass --i-own-this-target to run it against a target you own`,
  );
}

class CapReached extends Error {}

/** The run's caps, counted as it goes. */
class Budget {
  connections = 0;
  bytes = 0;
  private readonly started = performance.now();
  constructor(readonly caps: Pick<RobustnessOptions, 'maxConnections' | 'maxBytes' | 'maxDurationMs'>) {}
  get elapsedMs(): number {
    return Math.round(performance.now() - this.started);
  }
  connect(): void {
    if (this.connections + 1 > this.caps.maxConnections)
      throw new CapReached(`the cap of ${this.caps.maxConnections} connections was reached`);
    this.connections++;
  }
  send(bytes: number): void {
    if (this.bytes + bytes > this.caps.maxBytes)
      throw new CapReached(`the cap of ${this.caps.maxBytes} bytes sent was reached`);
    this.bytes += bytes;
  }
  time(): void {
    if (this.elapsedMs >= this.caps.maxDurationMs)
      throw new CapReached(`the cap of ${this.caps.maxDurationMs} ms of run time was reached`);
  }
}

/** A transcript whose lines go to the case running now: connections outlive cases. */
class CaseTranscript extends Transcript {
  current = new Transcript();
  override add(actor: string, direction: TranscriptLine['direction'], text: string): void {
    this.current.add(actor, direction, text);
  }
}

/** A ledger whose findings go to the case running now. */
class CaseLedger extends Ledger {
  current = new Ledger();
  override frameProblem(requirement: string, actor: string, reason: string): void {
    this.current.frameProblem(requirement, actor, reason);
  }
  override checked(requirements: Iterable<string>): void {
    this.current.checked(requirements);
  }
}

interface Fixture {
  appId: string;
  appToken: string;
  agentId: string;
  agentToken: string;
}

/** What a case is judged by in a profile: its stricter `ours` (a decision) with --profile bridge, else `expect`. */
export const expectationOf = (c: InputCase, profile: Profile): Expectation =>
  profile === 'bridge' && c.ours ? c.ours : c.expect;

/** A case's title in the reports: its category, then what is wrong with the input. */
export const titleOf = (c: InputCase) => `[${c.category}] ${c.why}`;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

export async function robustness(options: RobustnessOptions, helpers: RobustnessHelpers): Promise<number> {
  try {
    return await run(options, helpers);
  } catch (err) {
    if (!(err instanceof PreflightError)) throw err;
    console.error(`bridge-conformance: ${err.message}`);
    return 2;
  }
}

async function run(options: RobustnessOptions, helpers: RobustnessHelpers): Promise<number> {
  const seed = options.seed ?? randomInt(1, 2 ** 31 - 1);
  console.log(`bridge-conformance robustness: seed ${seed} (give --seed ${seed} to reproduce these cases)`);
  checkUrl(options.url);
  checkLoopback(options.url, options.iOwnThisTarget);
  const profile = options.profile;
  const baseline = helpers.baselineOf(options);
  const registry = loadRequirements();
  const generate = helpers.generate ?? (await import('./cases.js')).generateCases;
  const generated = generate({ seed, ...(options.cases ? { cases: options.cases } : {}) });
  for (const c of generated)
    for (const e of [c.expect, ...(c.ours ? [c.ours] : [])])
      if (!registry.has(e.requirement))
        throw new PreflightError(`case ${c.id} names ${e.requirement}, not a requirement`);
  const inScope = generated.filter((c) => c.source === 'protocol' || profile === 'bridge');
  const left = generated.length - inScope.length;
  const cases = helpers.selected(
    inScope.map((c) => ({ ...c, title: titleOf(c), requirements: [expectationOf(c, profile).requirement] })),
    options,
  );
  if (options.list) {
    for (const c of cases)
      console.log(`${c.id.padEnd(28)} ${c.endpoint.padEnd(6)} ${c.requirements[0]!.padEnd(9)} ${c.title}`);
    return 0;
  }
  const caps = {
    connections: options.maxConnections,
    bytes: options.maxBytes,
    durationMs: options.maxDurationMs,
  };
  console.log(
    `caps: at most ${caps.connections} connections, ${caps.bytes} bytes sent, ${caps.durationMs} ms (--max-connections, --max-bytes, --max-duration-ms)`,
  );
  await probeNodes([options.url], options.timeoutMs * 3);
  const target = new Target({ timeoutMs: options.timeoutMs });
  const provisioner = helpers.provisionerFor(options, target, options.url);
  await checkProvisioner(provisioner);
  const suite = suiteVersion(registry);
  console.log(suiteLine(suite));
  console.log(
    `bridge-conformance: ${cases.length} robustness cases, ${profile} profile${left ? ` (${left} decision cases need --profile bridge)` : ''}, against ${options.url}; provisioning: ${provisioner.description}`,
  );

  const budget = new Budget(options);
  const startedAt = new Date().toISOString();
  const created = await provisioner.create(
    {
      orgs: ['org1', 'org2'],
      apps: { app1: 'org1', app2: 'org2' },
      agents: { agent1: { org: 'org1' }, agent2: { org: 'org2' } },
    },
    'robustness',
  );
  const createdOrgs = provisioner.createsRegistrations ? Object.values(created.orgs).map((o) => o.org_id) : [];
  const pair = (app: string, agent: string): Fixture => ({
    appId: created.apps[app]!.app_id,
    appToken: created.apps[app]!.token,
    agentId: created.agents[agent]!.agent_id,
    agentToken: created.agents[agent]!.token,
  });
  const fixtures = { target: pair('app1', 'agent1'), canary: pair('app2', 'agent2') };
  const transcript = new CaseTranscript();
  const ledger = new CaseLedger();
  const actors = new Map<string, Actor>();
  const connect = async (name: string, endpoint: ClientKind, token: string): Promise<Actor> => {
    const open = actors.get(name);
    if (open?.isOpen) return open;
    budget.connect();
    const actor = await Actor.connect({
      name,
      wsBase: options.url,
      endpoint,
      token,
      carrier: 'header',
      transcript,
      timeoutMs: options.timeoutMs,
      profile,
      ledger,
    });
    actors.set(name, actor);
    return actor;
  };
  const send = (actor: Actor, frame: { text: string } | { binary: string }) => {
    if ('text' in frame) {
      budget.send(Buffer.byteLength(frame.text));
      actor.send(frame.text);
    } else {
      const data = Buffer.from(frame.binary, 'base64');
      budget.send(data.length);
      actor.sendBinary(data);
    }
  };
  /** Ends an event the target agent was given, so that nothing stays in flight into the next case. */
  const end = (agent: Actor, eventId: unknown) => {
    if (!agent.isOpen) return;
    const reply = JSON.stringify({ type: 'reply', event_id: eventId, content: 'done', done: true });
    budget.send(Buffer.byteLength(reply));
    agent.send(reply);
  };
  /**
   * Frames left from an earlier case (a late error, a reply) are noted, not judged; an event that reached an agent
   * (a frame the bridge took although the case expected an error, say) is ended by that agent.
   */
  const drain = async (actor: Actor) => {
    while (actor.pending) {
      const f = await actor.next(0).catch(() => undefined);
      if (f?.type === 'event' && actor.endpoint === 'agent') end(actor, f.event_id);
    }
  };
  /** The next frame of a type on a connection, skipping others (noted in the transcript); undefined on silence. */
  const waitFor = async (actor: Actor, match: (f: Record<string, unknown>) => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const leftMs = deadline - Date.now();
      if (leftMs <= 0) return undefined;
      try {
        const f = await actor.next(leftMs);
        if (match(f)) return f;
      } catch {
        return undefined;
      }
    }
  };
  const canaryLatencies: { case: string; ms: number }[] = [];
  /**
   * Sends an app's event and waits for its answer. A bridge may rate-limit an app (spec/protocol.md#rate-limit:
   * RATE_LIMIT_EXCEEDED with metadata.retry_after_seconds): the run's own events (a case's set-up, the canary) are
   * then sent again after that delay, within `retryMs`; the answer, and the time the accepted one was sent.
   */
  const sendEvent = async (app: Actor, event: string, retryMs: number) => {
    const deadline = performance.now() + retryMs;
    for (;;) {
      const sentAt = performance.now();
      budget.send(Buffer.byteLength(event));
      app.send(event);
      const answer = await waitFor(app, (f) => f.type === 'accepted' || f.type === 'error', options.timeoutMs);
      const meta = answer?.metadata as { retry_after_seconds?: unknown } | undefined;
      const after = typeof meta?.retry_after_seconds === 'number' ? Math.max(10, meta.retry_after_seconds * 1000) : 0;
      if (answer?.code !== 'RATE_LIMIT_EXCEEDED' || !after || performance.now() + after > deadline)
        return { answer, sentAt };
      transcript.add('suite', 'note', `${app.name} rate-limited: sending its event again in ${Math.round(after)} ms`);
      await new Promise((resolve) => setTimeout(resolve, after));
    }
  };

  /** app2 -> agent2 -> reply at app2 within --canary-ms; the latency, or why not. */
  const canary = async (caseId: string): Promise<number | string> => {
    const c = fixtures.canary;
    const app = await connect('canary-app', 'app', c.appToken);
    const agent = await connect('canary-agent', 'agent', c.agentToken);
    await drain(app);
    await drain(agent);
    const thread = `canary-${caseId}`.slice(0, 60);
    const event = JSON.stringify({
      type: 'event',
      agent_id: c.agentId,
      thread_id: thread,
      payload: { canary: caseId },
    });
    const { answer, sentAt: started } = await sendEvent(app, event, options.canaryMs);
    if (answer?.type !== 'accepted')
      return `the canary app (another organization) got ${answer ? JSON.stringify(answer).slice(0, 200) : `no answer to its event within ${options.timeoutMs} ms`}`;
    const delivered = await waitFor(agent, (f) => f.type === 'event', options.canaryMs);
    if (!delivered)
      return `the canary's agent (another organization) did not get its event within ${options.canaryMs} ms`;
    const reply = JSON.stringify({ type: 'reply', event_id: delivered.event_id, content: 'canary', done: true });
    budget.send(Buffer.byteLength(reply));
    agent.send(reply);
    const leftMs = Math.max(1, options.canaryMs - (performance.now() - started));
    const answered = await waitFor(app, (f) => f.type === 'reply' || f.type === 'error', leftMs);
    const ms = Math.round(performance.now() - started);
    if (!answered)
      return `the canary app (another organization) got no reply to its event within ${options.canaryMs} ms`;
    if (answered.type === 'error')
      return `the canary app (another organization) got ${JSON.stringify(answered).slice(0, 200)}`;
    return ms;
  };

  /** Whether the target still answers: /healthz where it has one, and a new handshake. */
  const alive = async (): Promise<boolean> => {
    const u = new URL(options.url);
    try {
      const res = await fetch(`${u.protocol === 'wss:' ? 'https:' : 'http:'}//${u.host}/healthz`, {
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      if (res.status >= 500) return false;
    } catch {
      return false;
    }
    try {
      budget.connect();
    } catch {
      return true; // no connection left to prove it: the health check answered
    }
    return probeEndpoint(options.url, options.timeoutMs).then(
      () => true,
      () => false,
    );
  };

  const results: ScenarioResult[] = [];
  let stopped: string | undefined;
  /** The case's requirements: its expectation's, the connection staying (unless it may close), the canary, MSG-…. */
  const requirementsOfCase = (c: InputCase) => [
    ...new Set([
      // A case that may close the connection is judged by the canary alone.
      ...(c.mayClose ? [] : [expectationOf(c, profile).requirement, KEEPS_CONNECTION[c.endpoint]]),
      CANARY,
      FRAME_REQUIREMENTS.protocol,
      ...(profile === 'bridge' ? [FRAME_REQUIREMENTS.decision] : []),
    ]),
  ];
  const untested = (c: InputCase, why: string): ScenarioResult => ({
    id: c.id,
    file: 'robustness/cases.ts',
    title: titleOf(c),
    requirements: requirementsOfCase(c),
    status: 'skipped',
    reason: `not run: ${why}`,
    durationMs: 0,
    transcript: [],
  });
  const got = (f: Record<string, unknown> | undefined) =>
    f ? JSON.stringify(f).slice(0, 200) : `nothing within ${options.timeoutMs} ms`;

  let caseNumber = 0;
  for (const c of cases) {
    caseNumber++;
    if (stopped) {
      results.push(untested(c, stopped));
      continue;
    }
    const caseTranscript = new Transcript();
    const caseLedger = new Ledger();
    transcript.current = caseTranscript;
    ledger.current = caseLedger;
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
      const agent = await connect('agent1', 'agent', t.agentToken);
      const app = await connect('app1', 'app', t.appToken);
      await drain(agent);
      await drain(app);
      if (c.needsEvent) {
        // A fresh event for every case that needs one, on its own thread.
        const event = JSON.stringify({
          type: 'event',
          agent_id: t.agentId,
          thread_id: `rob-${caseNumber}`,
          payload: { case: c.id },
        });
        const { answer: accepted } = await sendEvent(app, event, options.timeoutMs);
        const delivered = await waitFor(agent, (f) => f.type === 'event', options.timeoutMs);
        if (accepted?.type !== 'accepted' || !delivered)
          throw new Error(
            `set-up: the event for the case was not ${accepted?.type !== 'accepted' ? 'accepted' : 'delivered'}`,
          );
        ids.event_id = String(delivered.event_id);
      }
      const sender = c.endpoint === 'app' ? app : agent;
      for (const frame of c.frames) send(sender, 'text' in frame ? { text: fillPlaceholders(frame.text, ids) } : frame);

      // (a) the expectation
      /** An event the app's frame started: the target agent ends it (reply), so that it does not linger. */
      const endStarted = async () => {
        const delivered = await waitFor(agent, (f) => f.type === 'event', options.timeoutMs);
        if (delivered) end(agent, delivered.event_id);
      };
      if (e.kind === 'error' || e.kind === 'any-error') {
        const errors: string[] = [];
        const answer = await waitFor(
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
        // With mayAccept the bridge may take the frame: an app's event `accepted`, an agent's frame forwarded.
        const quietMs = Math.min(options.timeoutMs, 500);
        // Sequential waits: a waiter left running would take the next frames (the pong) from its connection.
        const forwarded =
          c.mayAccept && c.endpoint === 'agent'
            ? await waitFor(app, (f) => f.type === 'token' || f.type === 'reply', quietMs)
            : undefined;
        const answer =
          forwarded ??
          (await waitFor(sender, (f) => f.type === 'error' || (!!c.mayAccept && f.type === 'accepted'), quietMs));
        if (answer?.type === 'error') note(`answered with error ${String(answer.code)}`);
        else if (answer) note(`the bridge took the frame (${String(answer.type)}): allowed here`);
        else note(`no error (silence is allowed here)`);
        if (answer?.type === 'accepted') await endStarted();
        if (!c.mayClose) checked.push(e.requirement);
      } else if (c.endpoint === 'app') {
        let answer = await waitFor(app, (f) => f.type === 'accepted' || f.type === 'error', options.timeoutMs);
        const last = c.frames.at(-1);
        if (answer?.code === 'RATE_LIMIT_EXCEEDED' && last && 'text' in last) {
          // The rate is the bridge's to set (#rate-limit): the frame is sent again after the delay it gives.
          const after = (answer.metadata as { retry_after_seconds?: number } | undefined)?.retry_after_seconds ?? 0;
          await new Promise((resolve) => setTimeout(resolve, Math.max(10, after * 1000)));
          answer = (await sendEvent(app, fillPlaceholders(last.text, ids), options.timeoutMs)).answer;
        }
        if (answer?.type === 'accepted') {
          checked.push(e.requirement);
          await endStarted();
        } else fail(e.requirement, `expected accepted; got ${got(answer)}`);
      } else {
        // An agent's frame taken: its token, or its whole reply, reaches the app.
        const answer = await waitFor(
          app,
          (f) => f.type === 'token' || f.type === 'reply' || f.type === 'error',
          options.timeoutMs,
        );
        if (answer && answer.type !== 'error') checked.push(e.requirement);
        else
          fail(e.requirement, `expected the agent's ${c.message ?? 'frame'} forwarded to the app; got ${got(answer)}`);
      }
      // End the case's event (it may be ended already: then an error comes, which the next case drains).
      if (c.needsEvent) end(agent, ids.event_id);

      // (b) the sender's connection still answers ping
      if (sender.isOpen) {
        budget.send(15);
        sender.send({ type: 'ping' });
        const pong = await waitFor(sender, (f) => f.type === 'pong', options.timeoutMs);
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
      if (c.endpoint === 'app') await drain(agent);
      // (c) the canary
      const latency = await canary(c.id);
      if (typeof latency === 'number') {
        canaryLatencies.push({ case: c.id, ms: latency });
        note(`canary answered in ${latency} ms`);
        checked.push(CANARY);
      } else fail(CANARY, latency);
    } catch (err) {
      if (err instanceof CapReached) {
        stopped = `${err.message} (during case ${c.id})`;
        results.push({ ...untested(c, stopped), transcript: caseTranscript.lines });
        continue;
      }
      // A handshake refused or a set-up that did not go: the case is not judged unless the target is gone.
      note(`stopped: ${(err as Error).message}`);
      if (!failures.length) failures.push({ requirements: [], reason: (err as Error).message });
    }
    if (failures.length && !(await alive().catch(() => false))) {
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
    results.push({
      id: c.id,
      file: 'robustness/cases.ts',
      title: titleOf(c),
      requirements: requirementsOfCase(c),
      status: all.length ? 'failed' : setup ? 'errored' : 'passed',
      ...(all.length
        ? { reason: all[0]!.reason, failures: all, failedRequirements: [...failed] }
        : setup
          ? { reason: setup.reason, stop: { reason: setup.reason } }
          : {}),
      checked: held,
      durationMs: Math.round(performance.now() - started),
      transcript: caseTranscript.lines,
    });
    if (crashed) console.log(`bridge-conformance: ${stopped}; the remaining cases are untested`);
  }
  for (const a of actors.values()) a.terminate('end of the run');
  const leftBehind: string[] = [];
  if (createdOrgs.length && !stopped?.startsWith('the target stopped')) {
    try {
      await provisioner.cleanup(createdOrgs);
    } catch {
      leftBehind.push(...createdOrgs);
    }
  } else leftBehind.push(...(stopped?.startsWith('the target stopped') ? createdOrgs : []));
  if (stopped) console.log(`bridge-conformance: the run stopped: ${stopped}`);

  const named = new Set(results.flatMap((s) => s.requirements));
  const judged = [
    ...[...registry.values()].filter((r) => named.has(r.id) && !r.id.startsWith('ROB-') && inProfile(r, profile)),
    ...helpers.requirementsOf('robustness', profile),
  ];
  const verdicts = judge(judged, results, baseline);
  const notRun = results.filter((s) => s.status === 'skipped').length;
  if (notRun && verdicts.overall.exitCode === 0)
    verdicts.overall = {
      conforms: false,
      exitCode: 3,
      headline: `incomplete: ${notRun} case(s) untested (${stopped})`,
    };
  const sorted = canaryLatencies.map((l) => l.ms).sort((a, b) => a - b);
  const result: RunResult = {
    suite,
    role: 'robustness',
    profile,
    target: options.url,
    provisioning: provisioner.description,
    ...(options.expectedFailures ? { baselineFile: options.expectedFailures } : {}),
    startedAt,
    durationMs: budget.elapsedMs,
    hasClock: false,
    leftBehind,
    scenarios: results,
    ...verdicts,
    robustness: {
      seed,
      cases: cases.length,
      untested: notRun,
      ...(stopped ? { stopped } : {}),
      caps,
      used: { connections: budget.connections, bytes: budget.bytes, durationMs: budget.elapsedMs },
      canary: {
        latenciesMs: canaryLatencies,
        ...(sorted.length ? { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) } : {}),
      },
    },
  };
  if (sorted.length)
    console.log(
      `canary: ${sorted.length} answers, p50 ${result.robustness!.canary.p50Ms} ms, p99 ${result.robustness!.canary.p99Ms} ms`,
    );
  return helpers.finish(result, options);
}
