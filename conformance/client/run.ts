// Runs one client scenario: starts the mock bridge, spawns the third party's command (through the shell, in its
// own process group) with BRIDGE_URL, BRIDGE_TOKEN, BRIDGE_SCENARIO and BRIDGE_TIME_SCALE, lets the scenario's
// script drive the mock and judge what the client sends (client/context.ts), then stops the command and the mock.
// The result is an Outcome like the server role's (outcome.ts): every requirement whose checks held (`checked`),
// the failure that stopped it (`failures`), warnings, or the harness contract the client broke (`harness`).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Transcript } from '../actor.js';
import type { Outcome } from '../outcome.js';
import type { Profile } from '../scenario.js';
import type { ClientKind } from '../../generated/index.js';
import {
  ClientContext,
  ClientFailure,
  HarnessBreach,
  NotApplicable,
  NotJudged,
  type ClientScenario,
  type ClientSettings,
} from './context.js';
import { MockBridge } from './mock-bridge.js';
import { ClientProcess } from './process.js';

export {
  ClientContext,
  type ClientScenario,
  ClientFailure,
  HarnessBreach,
  NotApplicable,
  NotJudged,
  NO_TOKEN_IN_FRAMES,
  ONE_AGENT_CONNECTION,
  VALID_FRAMES,
} from './context.js';
export { ClientProcess } from './process.js';

export interface ClientRunOptions {
  /** A shell command line. */
  command: string;
  cwd?: string;
  /** Extra environment for the command. */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for the client's first connection (its start-up included). Default 30 s. */
  connectTimeoutMs?: number;
  /** Which requirements are judged (default: protocol). */
  profile?: Profile;
  /** BRIDGE_TIME_SCALE given to the client: the protocol's heartbeat and backoff K times faster. Default 1. */
  timeScale?: number;
  /** An agent answering after this is slow (a warning). Default 10 s. */
  answerWindowMs?: number;
  /** An agent not answering by this is silent (a failure). Default 60 s. */
  answerTimeoutMs?: number;
}

/** How long a client under test may take to start and connect, unless --connect-timeout-ms says otherwise. */
export const CONNECT_TIMEOUT_MS = 30_000;
/** An agent's answer within this is on time; later it is slow (a warning of CLI-007). */
export const ANSWER_WINDOW_MS = 10_000;
/**
 * No answer by this is silence (a failure of CLI-007). On real time, whatever the scale: an agent's work is not a
 * timer of the protocol. A minute covers an agent answering in 25 s on a loaded machine, with room to spare.
 */
export const ANSWER_TIMEOUT_MS = 60_000;

const base62 = (n: number) => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(n)].map((b) => alphabet[b % 62]).join('');
};

/** The ids the mock uses for its pretend registrations. */
export const MOCK_APP_ID = 'conformance-app';
export const MOCK_AGENT_ID = 'conformance-agent';

export function tokenFor(role: ClientKind): string {
  return role === 'app' ? `rlk_${MOCK_APP_ID}_${base62(40)}` : `rla_${MOCK_AGENT_ID}_${base62(40)}`;
}

function settingsOf(options: ClientRunOptions): ClientSettings {
  return {
    connectTimeoutMs: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    profile: options.profile ?? 'protocol',
    timeScale: options.timeScale ?? 1,
    answerWindowMs: options.answerWindowMs ?? ANSWER_WINDOW_MS,
    answerTimeoutMs: options.answerTimeoutMs ?? ANSWER_TIMEOUT_MS,
  };
}

type Ending = Omit<Outcome, 'durationMs' | 'transcript'>;

/** How the script ended, as an outcome: what held up to there, and why it stopped. */
function ending(ctx: ClientContext, err: unknown): Ending {
  const warnings = ctx.warnings.length ? { warnings: ctx.warnings } : {};
  if (err === undefined) {
    ctx.everyFrameRulesHeld(true);
    return { status: 'passed', checked: [...ctx.checked], ...warnings };
  }
  ctx.everyFrameRulesHeld(false);
  const step = ctx.step + 1;
  if (err instanceof ClientFailure) {
    const checked = [...ctx.checked].filter((id) => !err.requirements.includes(id));
    return {
      status: 'failed',
      reason: err.reason,
      failedStep: step,
      failedRequirements: err.requirements,
      failures: [{ requirements: err.requirements, reason: err.reason, step }],
      checked,
      // What the scenario had still to judge after the failure is blocked by it, not errored.
      stop: { step, reason: err.reason, by: err.requirements },
      ...warnings,
    };
  }
  const checked = [...ctx.checked];
  if (err instanceof HarnessBreach)
    return { status: 'errored', reason: err.message, harness: err.message, failedStep: step, checked, ...warnings };
  const reason = `the scenario broke: ${err instanceof Error ? err.message : String(err)}`;
  return { status: 'errored', reason, failedStep: step, checked, stop: { step, reason }, ...warnings };
}

export async function runClientScenario(scenario: ClientScenario, options: ClientRunOptions): Promise<Outcome> {
  const transcript = new Transcript();
  const started = performance.now();
  const settings = settingsOf(options);
  const token = tokenFor(scenario.role);
  const mock = await MockBridge.start({ role: scenario.role, token, transcript });
  transcript.add('mock', 'note', `mock bridge at ${mock.url}; running: ${options.command}`);
  const child = spawn(options.command, {
    shell: true,
    detached: true,
    cwd: options.cwd ?? process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...options.env,
      BRIDGE_URL: mock.url,
      BRIDGE_TOKEN: token,
      BRIDGE_SCENARIO: scenario.id,
      BRIDGE_TIME_SCALE: String(settings.timeScale),
    },
  });
  const client = new ClientProcess(child, transcript);
  const ctx = new ClientContext(scenario, mock, client, settings);
  let outcome: Ending;
  try {
    let notApplicable: NotApplicable | undefined;
    try {
      await scenario.script(ctx);
    } catch (err) {
      if (err instanceof NotApplicable) notApplicable = err;
      else if (!(err instanceof NotJudged)) throw err;
    }
    await ctx.settle();
    const late = ctx.pendingFailure();
    if (late) throw late;
    outcome = notApplicable
      ? { status: 'skipped', reason: `not applicable: ${notApplicable.message}` }
      : ending(ctx, undefined);
  } catch (err) {
    outcome = ending(ctx, err);
  } finally {
    await client.stop();
    await mock.stop();
  }
  return { ...outcome, durationMs: Math.round(performance.now() - started), transcript: transcript.lines };
}
