// What every step handler shares: the run's state (StepEnv), how a step fails (StepFailure), and the helpers that
// find an actor, expand a value, and judge a frame against a pattern in the run's profile.
import type { ClientKind } from '../../generated/index.js';
import type { Actor, Transcript } from '../actor.js';
import { expand } from '../generate.js';
import { interpolate, mismatch, type Bindings, type MatchOptions } from '../match.js';
import type { Ledger } from '../ledger.js';
import type { Placement } from '../nodes.js';
import type { RunContext } from '../run-context.js';
import { inProfile } from '../scenario.js';
import type { Step, StepArgsMap } from './kinds.js';

export class StepFailure extends Error {
  constructor(
    message: string,
    readonly requirement?: string,
  ) {
    super(message);
  }
}

/**
 * A step did not get what it relies on rather than what it checks: a frame whose coming is a rule of its own (a
 * pong, an accepted, a forwarded token; `needs` in a scenario). That rule fails, and the scenario's remaining checks
 * are blocked by it instead of failed.
 */
export class Barrier extends Error {
  constructor(
    message: string,
    readonly requirement: string,
  ) {
    super(message);
  }
}

/**
 * A step's surprise at a frame that already broke a frame rule (MSG-001: it is no message of the protocol): the
 * same defect, blamed once on that rule; what the step checks of the frame is blocked, not failed.
 */
export class Consequence extends Error {
  constructor(
    message: string,
    readonly requirements: string[],
  ) {
    super(message);
  }
}

export interface StepEnv {
  ctx: RunContext;
  /** What the scenario found so far: failures, the checks that held, warnings. */
  ledger: Ledger;
  /**
   * The frame rules broken by a frame the scenario took a value from (a resume token, an event id): what it does
   * with that value can no longer be judged on its own, so its later surprises are blocked by those rules.
   */
  taintedBy?: string[];
  bindings: Bindings;
  kinds: Map<string, ClientKind>;
  actors: Map<string, Actor>;
  transcript: Transcript;
  /** Which node each connection and HTTP call of the scenario goes to. */
  placement: Placement;
  /** performance.now() of each `mark` a step set. */
  marks: Map<string, number>;
  /** The resume tokens the scenario's connections received (resume profile: no two events share one). */
  resumeTokens: Set<string>;
  runSteps(steps: Step[]): Promise<void>;
}

/** What one step kind does, given its fields and how long it may wait for the target. */
export type StepHandler<K extends keyof StepArgsMap> = (
  args: StepArgsMap[K],
  env: StepEnv,
  timeoutMs: number,
) => Promise<void> | void;

export function actorOf(env: StepEnv, name: string): Actor {
  const actor = env.actors.get(name);
  if (!actor) throw new StepFailure(`no connected actor ${name}`);
  return actor;
}

/** A step's value with `${bindings}` filled in and the `$…` generators expanded. */
export const value = (env: StepEnv, v: unknown) => expand(interpolate(v, env.bindings));

/** Whether the run judges a requirement (known, and in its profile). */
export const judges = (env: StepEnv) => (id: string) => {
  const r = env.ctx.requirements.get(id);
  return !!r && inProfile(r, env.ctx.profile);
};

/**
 * Matches a frame or body: first what the protocol requires (every `$ours` left out), then, in a run that judges
 * them, the `$ours` parts, whose mismatch fails only their own requirement.
 */
/** Returns the names it captured (bound from now on). */
export function judge(env: StepEnv, pattern: unknown, actual: unknown, what: string): string[] {
  const captured: Bindings = new Map();
  // The whole frame goes with the mismatch: "expected pong, got error" alone hides the error's code and text.
  const received = ` (received ${JSON.stringify(actual)?.slice(0, 300)})`;
  const protocolOnly = mismatch(pattern, actual, env.bindings, captured, '', { marks: env.marks });
  if (protocolOnly) throw new StepFailure(`${what}: ${protocolOnly}${received}`);
  const failedOurs: MatchOptions['failedOurs'] = {};
  const ours = mismatch(pattern, actual, env.bindings, new Map(), '', {
    marks: env.marks,
    judgesOurs: judges(env),
    failedOurs,
  });
  if (ours) throw new StepFailure(`${what}: ${ours}${received}`, failedOurs.requirement);
  for (const [k, v] of captured) env.bindings.set(k, v);
  return [...captured.keys()];
}
