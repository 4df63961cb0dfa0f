// What each kind of scenario step does (README "Scenario files"). A step throws StepFailure when the target does
// not do what it expects; `requirement` narrows the blame to one decision (a `$ours` pattern, a refusal's form).
import { ERRORS } from '../generated/index.js';
import { Actor, type Carrier, type Endpoint, type HttpRefusal, type Transcript } from './actor.js';
import { expand } from './generate.js';
import { interpolate, mismatch, type Bindings, type MatchOptions } from './match.js';
import type { RunContext } from './run.js';
import { inProfile, type Step } from './scenario.js';

export class StepFailure extends Error {
  constructor(message: string, readonly requirement?: string) {
    super(message);
  }
}

export interface StepEnv {
  ctx: RunContext;
  bindings: Bindings;
  kinds: Map<string, Endpoint>;
  actors: Map<string, Actor>;
  transcript: Transcript;
  /** performance.now() of each `mark` a step set. */
  marks: Map<string, number>;
  runSteps(steps: Step[]): Promise<void>;
}

type Args = Record<string, any>;

const HEARTBEAT_MS = 30_000;

function actorOf(env: StepEnv, name: string): Actor {
  const actor = env.actors.get(name);
  if (!actor) throw new StepFailure(`no connected actor ${name}`);
  return actor;
}

const value = (env: StepEnv, v: unknown) => expand(interpolate(v, env.bindings));

const judges = (env: StepEnv) => (id: string) => {
  const r = env.ctx.requirements.get(id);
  return !!r && inProfile(r, env.ctx.profile);
};

/**
 * Matches a frame or body: first what the protocol requires (every `$ours` left out), then, in a run that judges
 * them, the `$ours` parts, whose mismatch fails only their own requirement.
 */
function judge(env: StepEnv, pattern: unknown, actual: unknown, what: string): void {
  const captured: Bindings = new Map();
  // The whole frame goes with the mismatch: "expected pong, got error" alone hides the error's code and text.
  const received = ` (received ${JSON.stringify(actual)?.slice(0, 300)})`;
  const protocolOnly = mismatch(pattern, actual, env.bindings, captured, '', { marks: env.marks });
  if (protocolOnly) throw new StepFailure(`${what}: ${protocolOnly}${received}`);
  const failedOurs: MatchOptions['failedOurs'] = {};
  const ours = mismatch(pattern, actual, env.bindings, new Map(), '', { marks: env.marks, judgesOurs: judges(env), failedOurs });
  if (ours) throw new StepFailure(`${what}: ${ours}${received}`, failedOurs.requirement);
  for (const [k, v] of captured) env.bindings.set(k, v);
}

function connectOptions(env: StepEnv, args: Args, timeoutMs: number) {
  const as = args.as ?? args.actor;
  const endpoint: Endpoint = args.endpoint ?? env.kinds.get(as) ?? (String(args.actor).startsWith('agent') ? 'agent' : 'app');
  const token = args.token !== undefined ? (args.token === null ? undefined : String(value(env, args.token))) : (env.bindings.get(`${as}.token`) as string | undefined);
  const carrier: Carrier = args.carrier ?? (token ? 'header' : 'none');
  const queryToken = args.queryToken === undefined ? undefined : String(value(env, args.queryToken));
  return { name: args.actor as string, wsBase: env.ctx.target.options.url, endpoint, token, carrier, queryToken, transcript: env.transcript, timeoutMs, profile: env.ctx.profile };
}

/**
 * A refused handshake. The protocol names the code but not how it is reported, so any clear report passes: an
 * `error` frame with the code, a close whose reason names it, or an HTTP refusal whose body names it. `form` (a
 * decision, W1) additionally requires one error frame without event_id, then the catalogue's close code with the
 * code as reason.
 */
async function refused(env: StepEnv, args: Args, timeoutMs: number): Promise<void> {
  const code = String(args.code);
  const attempt = await Actor.attempt(connectOptions(env, args, timeoutMs));
  if (!(attempt instanceof Actor)) return refusedOverHttp(env, args, attempt, code);
  env.actors.set(args.actor, attempt);
  let frame: Record<string, unknown> | undefined;
  try {
    frame = await attempt.next(timeoutMs);
  } catch {
    // closed with no frame, or silent: judged below by the close
  }
  const closeInfo = await attempt.closed(timeoutMs).catch(() => undefined);
  const saidInFrame = frame?.type === 'error' && frame.code === code;
  const saidInClose = !!closeInfo?.reason.includes(code);
  if (!saidInFrame && !saidInClose) {
    throw new StepFailure(`${args.actor} expected a refusal with ${code}; got ${frame ? JSON.stringify(frame) : 'no frame'} and ${closeInfo ? `close ${closeInfo.code} ${JSON.stringify(closeInfo.reason)}` : 'no close'}`);
  }
  if (!closeInfo) throw new StepFailure(`${args.actor} was told ${code} but the connection stayed open`);
  if (args.form && judges(env)(args.form)) {
    const closeCode = (ERRORS as Record<string, { closeCode?: number }>)[code]?.closeCode;
    const form = !saidInFrame ? 'no error frame before the close'
      : 'event_id' in frame! ? `the error frame has an event_id`
      : closeInfo.code !== closeCode ? `close code ${closeInfo.code}, expected ${closeCode}`
      : closeInfo.reason !== code ? `close reason ${JSON.stringify(closeInfo.reason)}, expected ${code}`
      : attempt.pending > 0 ? `${attempt.pending} more frame(s) before the close` : undefined;
    if (form) throw new StepFailure(`${args.actor} refusal with ${code}: ${form}`, args.form);
  }
}

function refusedOverHttp(env: StepEnv, args: Args, refusal: HttpRefusal, code: string): void {
  if (!refusal.body.includes(code)) {
    throw new StepFailure(`${args.actor} expected a refusal with ${code}; the upgrade was answered with HTTP ${refusal.status} without naming it: ${refusal.body.slice(0, 200)}`);
  }
  if (args.form && judges(env)(args.form)) throw new StepFailure(`${args.actor} refusal with ${code} came as HTTP ${refusal.status}, not as an error frame and a close (W1)`, args.form);
}

/** Of two connections, exactly one is closed within the timeout and the other still answers a ping. */
async function expectOneClosed(env: StepEnv, args: Args, timeoutMs: number): Promise<void> {
  const [a, b] = (args.actors as string[]).map((n) => actorOf(env, n));
  const deadline = Date.now() + timeoutMs;
  while (a!.isOpen && b!.isOpen && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const open = [a!, b!].filter((x) => x.isOpen);
  if (open.length !== 1) throw new StepFailure(`of ${args.actors.join(' and ')}, expected exactly one to stay open; ${open.length} are open after ${timeoutMs} ms`);
  const survivor = open[0]!;
  survivor.send({ type: 'ping' });
  await survivor.take('pong', timeoutMs);
  if (args.alias) env.actors.set(args.alias, survivor);
}

/**
 * Moves the target's time. With `keepAlive` (the default) every open actor pings, as live clients do: every 30 s
 * of target time when the target closes idle connections, once at the end when its settings say it never does
 * (one clock call instead of thousands for a day).
 */
async function advanceClock(env: StepEnv, args: Args, timeoutMs: number): Promise<void> {
  const { ctx, transcript } = env;
  const keepAlive = args.keepAlive !== false;
  const period = keepAlive && ctx.settings.idle_close_ms !== null ? HEARTBEAT_MS : Infinity;
  for (let left = Number(value(env, args.ms)); left > 0; ) {
    const stepMs = Math.min(left, period);
    if (ctx.hasClock) await ctx.provisioner.advanceClock(stepMs);
    else await new Promise((resolve) => setTimeout(resolve, stepMs));
    left -= stepMs;
    transcript.add('clock', 'note', `advanced ${stepMs} ms`);
    if (!keepAlive) continue;
    for (const actor of env.actors.values()) {
      if (!actor.isOpen) continue;
      actor.send({ type: 'ping' });
      await actor.take('pong', timeoutMs);
    }
  }
}

export async function runStep(step: Step, env: StepEnv): Promise<void> {
  const { ctx, bindings } = env;
  const [kind, args] = Object.entries(step)[0] as [string, Args];
  const timeout = Number(args.timeoutMs ?? ctx.timeoutMs);
  switch (kind) {
    case 'connect': {
      env.actors.get(args.actor)?.terminate();
      env.actors.set(args.actor, await Actor.connect(connectOptions(env, args, timeout)));
      return;
    }
    case 'refused':
      env.actors.get(args.actor)?.terminate();
      return refused(env, args, timeout);
    case 'send': {
      const actor = actorOf(env, args.actor);
      if (args.mark) env.marks.set(String(args.mark), performance.now());
      if (args.raw !== undefined) return actor.send(String(value(env, args.raw)));
      return actor.send(value(env, args.frame));
    }
    case 'expect': {
      const frame = await actorOf(env, args.actor).next(timeout);
      return judge(env, args.frame, frame, `${args.actor} expected ${JSON.stringify(args.frame)}`);
    }
    case 'collect': {
      // `count` frames, each matching one of `each`, and at least one matching `some` (rate limits, bursts).
      const actor = actorOf(env, args.actor);
      const count = Number(value(env, args.count));
      let someSeen = !args.some;
      for (let i = 0; i < count; i++) {
        const frame = await actor.next(timeout);
        const fits = (args.each as unknown[]).some((p) => !mismatch(p, frame, bindings, new Map()));
        if (!fits) throw new StepFailure(`${args.actor} frame ${i + 1} of ${count} fits none of ${JSON.stringify(args.each)}: ${JSON.stringify(frame)}`);
        if (args.some && !mismatch(args.some, frame, bindings, new Map())) someSeen = true;
      }
      if (!someSeen) throw new StepFailure(`${args.actor}: none of ${count} frames matched ${JSON.stringify(args.some)}`);
      return;
    }
    case 'expectClose': {
      const actor = actorOf(env, args.actor);
      const info = await actor.closed(timeout);
      if (actor.pending > 0) throw new StepFailure(`${args.actor} closed with ${actor.pending} frame(s) not yet expected; expect them before the close`);
      if (args.code !== undefined && info.code !== args.code) throw new StepFailure(`${args.actor} expected close ${args.code}, got ${info.code} ${info.reason}`);
      if (args.reason !== undefined && info.reason !== args.reason) throw new StepFailure(`${args.actor} expected close reason ${args.reason}, got ${JSON.stringify(info.reason)}`);
      return;
    }
    case 'expectOneClosed':
      return expectOneClosed(env, args, timeout);
    case 'expectSilence': {
      // Answers come in order, so if the next frame after a ping is its pong, nothing else was pending.
      const actor = actorOf(env, args.actor);
      actor.send({ type: 'ping' });
      const frame = await actor.next(timeout);
      if (frame.type !== 'pong') throw new StepFailure(`${args.actor} expected nothing before its pong, got ${JSON.stringify(frame)}`);
      return;
    }
    case 'close': {
      const actor = actorOf(env, args.actor);
      actor.close();
      await actor.closed(timeout).catch(() => actor.terminate());
      env.actors.delete(args.actor);
      return;
    }
    case 'advanceClock':
      return advanceClock(env, args, timeout);
    case 'http': {
      const token = args.token === undefined || args.token === 'none' ? undefined : String(value(env, args.token));
      const path = String(value(env, args.path));
      const answer = await ctx.target.call(args.method ?? 'GET', `${ctx.target.v1Base}${path}`, token);
      env.transcript.add('http', 'note', `${args.method ?? 'GET'} ${path} -> ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
      if (args.status !== undefined) judge(env, args.status, answer.status, `${args.method ?? 'GET'} ${path} status`);
      if (args.expect !== undefined) judge(env, args.expect, answer.body, `${args.method ?? 'GET'} ${path} body`);
      return;
    }
    case 'rotateToken': {
      const name = args.target as string;
      const kind = env.kinds.get(name)!;
      const token = await ctx.provisioner.rotate(kind, String(bindings.get(`${name}.${kind}_id`)));
      bindings.set(`${name}.previous_token`, bindings.get(`${name}.token`)).set(`${name}.token`, token);
      return;
    }
    case 'deactivate': {
      const kind = env.kinds.get(args.target)!;
      return ctx.provisioner.deactivate(kind, String(bindings.get(`${args.target}.${kind}_id`)));
    }
    case 'setAllowlist': {
      const ids = args.apps === null ? null : (args.apps as string[]).map((a) => String(bindings.get(`${a}.app_id`)));
      return ctx.provisioner.setAllowlist(String(bindings.get(`${args.agent}.agent_id`)), ids);
    }
    case 'listSessions': {
      const sessions = await ctx.provisioner.listSessions(String(bindings.get(`${args.agent}.agent_id`)));
      env.transcript.add('provision', 'note', `sessions of ${args.agent}: ${JSON.stringify(sessions).slice(0, 500)}`);
      return judge(env, args.expect, sessions, `sessions of ${args.agent}`);
    }
    case 'repeat': {
      const times = Number(value(env, args.times));
      for (let i = 0; i < times; i++) {
        bindings.set(args.as ?? 'i', i);
        await env.runSteps(args.steps);
      }
      return;
    }
    default:
      throw new StepFailure(`unknown step ${kind}`);
  }
}
