// Runs one scenario: provisions its fixtures, then executes its steps in order with named actors, stopping at the
// first step whose expectation is not met. How it ends says whom to blame:
//   failed   - a step that checks requirements of the run's profile found them broken: those requirements fail;
//   errored  - it could not get to its checks (provisioning refused, a setup step's surprise): nothing fails;
//   skipped  - the run cannot do what it needs (no test clock, an action the provisioning means does not support,
//              or — waived — a setting the user gave as null).
import type { ClientKind, FixtureSet } from '../generated/index.js';
import { Transcript, ProtocolViolation, type Actor } from './actor.js';
import type { Bindings } from './match.js';
import { Placement } from './nodes.js';
import { NotSupported } from './provision/provisioner.js';
import type { Outcome } from './outcome.js';
import type { RunContext } from './run-context.js';
import { actionsNeeded, clockTotalMs, inProfile, type Scenario, type Step } from './scenario.js';
import { nullSettings, settingsBindings, settingsNumber } from './settings.js';
import { runStep, StepFailure, type StepEnv } from './steps/index.js';
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
  const checks = named.filter((id) => ctx.requirements.has(id) && inProfile(ctx.requirements.get(id)!, ctx.profile));
  return { run: checks.length > 0, checks };
}

/** `offset`: the scenario's number among all scenario files, which places its clients (nodes.ts). */
export async function runScenario(s: Scenario, ctx: RunContext, offset: number): Promise<Outcome> {
  const started = performance.now();
  const transcript = new Transcript();
  const placement = new Placement(ctx.nodes, offset);
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
  let index = 0;
  let current: { kind: string; checks: string[] } = { kind: 'provisioning', checks: [] };
  const env: StepEnv = {
    ctx,
    bindings,
    kinds,
    actors,
    transcript,
    placement,
    marks: new Map(),
    resumeTokens: new Set(),
    runSteps: async () => undefined,
  };
  env.runSteps = async (steps: Step[]): Promise<void> => {
    for (const step of steps) {
      index++;
      const { run, checks } = judgedChecks(step, ctx);
      if (!run) {
        transcript.add(
          'suite',
          'note',
          `step ${index} (${unpack(step).kind}) not run: it checks only decisions outside the ${ctx.profile} profile`,
        );
        continue;
      }
      current = { kind: unpack(step).kind, checks };
      await runStep(step, env);
    }
  };
  try {
    await provision(s, ctx, bindings, kinds);
    await env.runSteps(s.steps);
    return done('passed');
  } catch (err) {
    return blame(err, index, current, ctx, done);
  } finally {
    for (const a of actors.values()) a.terminate();
  }
}

/** How a scenario that stopped early ends: failed (and what), errored, or skipped. */
function blame(
  err: unknown,
  step: number,
  current: { kind: string; checks: string[] },
  ctx: RunContext,
  done: (status: Outcome['status'], extra?: Partial<Outcome>) => Outcome,
): Outcome {
  const reason = (err as Error).message;
  if (err instanceof NotSupported) {
    ctx.unsupported.set(err.action, reason);
    return done('skipped', { reason });
  }
  if (err instanceof ProtocolViolation)
    return done('failed', { reason, failedStep: step, failedRequirements: [err.requirement] });
  if (err instanceof StepFailure && err.requirement)
    return done('failed', { reason, failedStep: step, failedRequirements: [err.requirement] });
  if (step === 0) return done('errored', { reason: `provisioning failed: ${reason}` });
  if (current.checks.length) return done('failed', { reason, failedStep: step, failedRequirements: current.checks });
  return done('errored', {
    reason: `setup step ${step} (${current.kind}) did not go as the scenario needs, so its checks were not reached: ${reason}`,
    failedStep: step,
  });
}
