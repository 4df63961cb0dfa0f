// Runs one scenario: provisions its fixtures, then executes its steps in order with named actors, stopping at the
// first step whose expectation is not met. How it ends says whom to blame:
//   failed   - a step that checks requirements of the run's profile found them broken: those requirements fail;
//   errored  - it could not get to its checks (provisioning refused, a setup step's surprise): nothing fails;
//   skipped  - the run cannot do what it needs (no test clock, an action the provisioning means does not support,
//              or — waived — a setting the user gave as null).
import type { ClientKind, FixtureSet } from '../generated/index.js';
import { NothingArrived, Transcript, type Actor } from './actor.js';
import { Ledger } from './ledger.js';
import type { Bindings } from './match.js';
import { Placement } from './nodes.js';
import { NotSupported } from './provision/provisioner.js';
import type { Outcome } from './outcome.js';
import type { RunContext } from './run-context.js';
import {
  actionsNeeded,
  allChecks,
  BARRIERS,
  clockTotalMs,
  FRAME_REQUIREMENTS,
  inProfile,
  type Scenario,
  type Step,
} from './scenario.js';
import { nullSettings, settingsBindings, settingsNumber } from './settings.js';
import { Barrier, Consequence, runStep, StepFailure, type StepEnv } from './steps/index.js';
import { unpack } from './steps/kinds.js';

export type { Outcome } from './outcome.js';

function skipReason(s: Scenario, ctx: RunContext): Pick<Outcome, 'reason' | 'waived'> | undefined {
  const unset = nullSettings(s.settings, ctx.settings);
  if (unset.length) return { reason: `the target's settings say it has no ${unset.join(', ')} (null)`, waived: true };
  const clockMs = clockTotalMs(s.steps, settingsNumber(ctx.settings));
  if (clockMs > 0 && !ctx.hasClock) {
    if (!ctx.realTime)
      return {
        reason: `moves time by ${clockMs} ms and the target has no test clock (our bridge: BRIDGE_TEST_CLOCK=1; or pass --real-time for short waits)`,
      };
    if (clockMs > ctx.realTimeMaxMs)
      return {
        reason: `moves time by ${clockMs} ms, longer than --real-time-max ${ctx.realTimeMaxMs} ms, and the target has no test clock`,
      };
  }
  for (const action of actionsNeeded(s.steps)) {
    const why = ctx.unsupported.get(action);
    if (why) return { reason: why };
  }
  return undefined;
}

const fixtureSet = (s: Scenario): FixtureSet => ({
  orgs: s.fixtures.orgs ?? [],
  apps: s.fixtures.apps ?? {},
  agents: s.fixtures.agents ?? {},
});

async function provision(s: Scenario, ctx: RunContext, b: Bindings, kinds: Map<string, ClientKind>): Promise<void> {
  const created = await ctx.provisioner.create(fixtureSet(s), s.id);
  for (const [name, org] of Object.entries(created.orgs)) {
    b.set(`${name}.org_id`, org.org_id);
    if (ctx.provisioner.createsRegistrations && !ctx.createdOrgs.includes(org.org_id)) ctx.createdOrgs.push(org.org_id);
  }
  for (const [name, app] of Object.entries(created.apps)) {
    b.set(`${name}.app_id`, app.app_id).set(`${name}.token`, app.token);
    kinds.set(name, 'app');
  }
  for (const [name, agent] of Object.entries(created.agents)) {
    b.set(`${name}.agent_id`, agent.agent_id)
      .set(`${name}.token`, agent.token)
      .set(`${name}.name`, agent.name)
      .set(`${name}.description`, agent.description);
    kinds.set(name, 'agent');
  }
}

/** A step's `checks` that this run judges; a step naming checks of which none is judged is not run at all. */
function judgedChecks(step: Step, ctx: RunContext): { run: boolean; checks: string[] } {
  const named = unpack(step).args.checks;
  if (!named) return { run: true, checks: [] };
  const checks = named.filter((id) => judged(ctx, id));
  return { run: checks.length > 0, checks };
}

const judged = (ctx: RunContext, id: string) =>
  ctx.requirements.has(id) && inProfile(ctx.requirements.get(id)!, ctx.profile);

/** Every step at any depth, in file order, with what it judges (its checks, a refusal's form, its `$ours`). */
function plan(steps: Step[], ctx: RunContext): Map<Step, { order: number; judges: string[] }> {
  const map = new Map<Step, { order: number; judges: string[] }>();
  const visit = (list: Step[]) => {
    for (const step of list) {
      map.set(step, { order: map.size, judges: allChecks([step]).filter((id) => judged(ctx, id)) });
      const { kind, args } = unpack(step);
      if (kind === 'repeat') visit(args.steps);
    }
  };
  visit(steps);
  return map;
}

/** `offset`: the scenario's number among all scenario files, which places its clients (nodes.ts). */
export async function runScenario(s: Scenario, ctx: RunContext, offset: number): Promise<Outcome> {
  const started = performance.now();
  const transcript = new Transcript();
  const placement = new Placement(ctx.nodes, offset);
  const ledger = new Ledger();
  const done = (status: Outcome['status'], extra: Partial<Outcome> = {}): Outcome => ({
    status,
    durationMs: Math.round(performance.now() - started),
    ...(placement.several ? { connections: placement.connections } : {}),
    transcript: transcript.lines,
    ...extra,
  });
  const skip = skipReason(s, ctx);
  if (skip) return done('skipped', skip);

  const bindings: Bindings = settingsBindings(ctx.settings);
  const kinds = new Map<string, ClientKind>();
  const actors = new Map<string, Actor>();
  const steps = plan(s.steps, ctx);
  let index = 0;
  let current: { step?: Step; kind: string; checks: string[] } = { kind: 'provisioning', checks: [] };
  const env: StepEnv = {
    ctx,
    ledger,
    bindings,
    kinds,
    actors,
    transcript,
    placement,
    marks: new Map(),
    resumeTokens: new Set(),
    runSteps: async () => undefined,
  };
  env.runSteps = async (list: Step[]): Promise<void> => {
    for (const step of list) {
      index++;
      ledger.step = index;
      const { run, checks } = judgedChecks(step, ctx);
      if (!run) {
        transcript.add(
          'suite',
          'note',
          `step ${index} (${unpack(step).kind}) not run: it checks only decisions outside the ${ctx.profile} profile`,
        );
        continue;
      }
      current = { step, kind: unpack(step).kind, checks };
      await runStep(step, env);
      ledger.checked(steps.get(step)?.judges ?? checks);
    }
  };
  let stop: Stop | undefined;
  try {
    await provision(s, ctx, bindings, kinds);
    await env.runSteps(s.steps);
  } catch (err) {
    stop = stopOf(err, index, current, env);
    if (stop.skipped) return done('skipped', { reason: stop.reason });
    // What the scenario had still to check from the step it stopped at on is not passed by what held before.
    const at = current.step ? (steps.get(current.step)?.order ?? 0) : 0;
    ledger.stoppedBefore([...steps.values()].filter((p) => p.order >= at).flatMap((p) => p.judges));
  } finally {
    for (const a of actors.values()) a.terminate();
  }
  return done(...ending(ledger, stop));
}

/** Why a scenario stopped early; `fails`: the requirements to record as failed for it. */
interface Stop {
  reason: string;
  step: number;
  fails?: string[];
  /** The requirements it is blocked by (a failure, possibly recorded earlier: a frame that was not JSON). */
  by?: string[];
  skipped?: boolean;
}

/** The status and details of a scenario from what its ledger holds and how it stopped. */
function ending(ledger: Ledger, stop: Stop | undefined): [Outcome['status'], Partial<Outcome>] {
  if (stop?.fails) ledger.fail(stop.fails, stop.reason, stop.step);
  const failures = ledger.failures;
  const first = failures[0];
  const common: Partial<Outcome> = {
    checked: ledger.checkedRequirements,
    ...(failures.length ? { failures, failedRequirements: ledger.failedRequirements } : {}),
    ...(ledger.warnings.length ? { warnings: ledger.warnings } : {}),
    ...(stop ? { stop: { step: stop.step, reason: stop.reason, ...(stop.by ? { by: stop.by } : {}) } } : {}),
  };
  if (first) return ['failed', { ...common, reason: first.reason, ...(first.step ? { failedStep: first.step } : {}) }];
  if (stop) return ['errored', { ...common, reason: stop.reason, ...(stop.step ? { failedStep: stop.step } : {}) }];
  return ['passed', common];
}

/** The pong's rule on each endpoint: a step that waited for a pong in vain is blocked by it. */
const PONG_RULE = { app: BARRIERS.appPong, agent: BARRIERS.agentPong } as const;

/** How a scenario that stopped early ends: what failed (and so blocks the rest), a setup's surprise, or a skip. */
function stopOf(err: unknown, step: number, current: { kind: string; checks: string[] }, env: StepEnv): Stop {
  const { ctx } = env;
  const reason = (err as Error).message;
  if (err instanceof NotSupported) {
    ctx.unsupported.set(err.action, reason);
    return { reason, step, skipped: true };
  }
  if (step === 0) return { reason: `provisioning failed: ${reason}`, step };
  const consequence = (of: string[]): Stop => ({
    reason: `${reason} (a consequence of ${of.join(', ')}, already failed)`,
    step,
    by: of,
  });
  if (err instanceof Consequence) return consequence(err.requirements);
  const barrier =
    err instanceof Barrier ? err.requirement : err instanceof NothingArrived ? silenceRule(err, env) : undefined;
  if (barrier === MSG_001_ALREADY) return { reason, step, by: [FRAME_REQUIREMENTS.protocol] };
  if (barrier && judged(ctx, barrier))
    return { reason: `${reason} (${barrier})`, step, fails: [barrier], by: [barrier] };
  if (env.taintedBy) return consequence(env.taintedBy);
  if (err instanceof StepFailure && err.requirement)
    return { reason, step, fails: [err.requirement], by: [err.requirement] };
  if (current.checks.length) return { reason, step, fails: current.checks, by: current.checks };
  return {
    reason: `setup step ${step} (${current.kind}) did not go as the scenario needs, so its checks were not reached: ${reason}`,
    step,
  };
}

/** Marks a silence caused by a frame that was not JSON: MSG-001 is already recorded for it. */
const MSG_001_ALREADY = '(MSG-001 recorded)';

/**
 * Whose rule a silence breaks: a frame the suite could not read (MSG-001, recorded already), a pong that never came
 * (HB-001/HB-002), or an accepted withheld while an agent holds the event (FLOW-011: accepted does not wait for the
 * agent). Any other silence is the step's own finding.
 */
function silenceRule(err: NothingArrived, env: StepEnv): string | undefined {
  if (env.actors.get(err.actor)?.unreadable) return MSG_001_ALREADY;
  if (err.awaited === 'pong') return PONG_RULE[err.endpoint];
  const agentHoldsEvent = [...env.actors.values()].some((a) => a.endpoint === 'agent' && a.holds('event'));
  if (err.awaited === 'accepted' && agentHoldsEvent) return BARRIERS.acceptedFirst;
  return undefined;
}
