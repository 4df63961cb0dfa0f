// Runs one scenario: provisions its fixtures (or takes them from a fixtures file), then executes its steps in order
// with named actors, failing at the first step whose expectation is not met.
import type { AgentCreated, AppCreated, Organization } from '../generated/index.js';
import { Actor, ProtocolViolation, Transcript, type Carrier, type Endpoint, type TranscriptLine } from './actor.js';
import { expand } from './generate.js';
import { interpolate, mismatch, type Bindings } from './match.js';
import { clockTotalMs, needsAdmin, type Scenario, type Step } from './scenario.js';
import type { Target } from './target.js';

/** Pre-provisioned registrations, for targets whose admin API the runner may not use. */
export interface FixtureFile {
  apps?: Record<string, { app_id: string; org_id: string; token: string }>;
  agents?: Record<string, { agent_id: string; org_id: string; token: string; name?: string; description?: string }>;
}

export interface RunContext {
  target: Target;
  hasClock: boolean;
  realTime: boolean;
  realTimeMaxMs: number;
  timeoutMs: number;
  fixtureFile: FixtureFile | undefined;
}

export interface Outcome {
  status: 'passed' | 'failed' | 'skipped';
  reason?: string;
  failedStep?: number;
  /** The requirements the failing step checks (its `checks`), or all the scenario names when it says none. */
  failedRequirements?: string[];
  durationMs: number;
  transcript: TranscriptLine[];
}

const HEARTBEAT_MS = 30_000;

class StepFailure extends Error {}

function skipReason(s: Scenario, ctx: RunContext): string | undefined {
  const clockMs = clockTotalMs(s.steps);
  if (clockMs > 0 && !ctx.hasClock) {
    if (!ctx.realTime) return `moves time by ${clockMs} ms and the target has no test clock (start it with BRIDGE_TEST_CLOCK=1, or pass --real-time for short waits)`;
    if (clockMs > ctx.realTimeMaxMs) return `moves time by ${clockMs} ms, longer than --real-time-max ${ctx.realTimeMaxMs} ms, and the target has no test clock`;
  }
  if (ctx.fixtureFile) {
    if (needsAdmin(s.steps)) return 'changes registrations (rotation, deactivation, allowlists or admin calls), which a fixtures file cannot';
    for (const [name, agent] of Object.entries(s.fixtures.agents ?? {})) {
      if (!ctx.fixtureFile.agents?.[name]) return `the fixtures file has no agent ${name}`;
      if (agent.allowlist || agent.ttl_days || agent.description !== undefined) return `agent ${name} needs an allowlist, TTL or description the fixtures file cannot promise`;
    }
    for (const name of Object.keys(s.fixtures.apps ?? {})) if (!ctx.fixtureFile.apps?.[name]) return `the fixtures file has no app ${name}`;
  } else if (!ctx.target.options.adminToken) {
    return 'no --admin-token to provision fixtures, and no --fixtures file';
  }
  return undefined;
}

async function provision(s: Scenario, ctx: RunContext, b: Bindings, kinds: Map<string, Endpoint>): Promise<void> {
  const { fixtures } = s;
  if (ctx.fixtureFile) {
    for (const [name, app] of Object.entries(fixtures.apps ?? {})) {
      const f = ctx.fixtureFile.apps![name]!;
      b.set(`${name}.app_id`, f.app_id).set(`${name}.token`, f.token).set(`${app}.org_id`, f.org_id);
      kinds.set(name, 'app');
    }
    for (const [name, agent] of Object.entries(fixtures.agents ?? {})) {
      const f = ctx.fixtureFile.agents![name]!;
      b.set(`${name}.agent_id`, f.agent_id).set(`${name}.token`, f.token).set(`${agent.org}.org_id`, f.org_id);
      b.set(`${name}.name`, f.name ?? '').set(`${name}.description`, f.description ?? '');
      kinds.set(name, 'agent');
    }
    return;
  }
  const t = ctx.target;
  for (const org of fixtures.orgs ?? []) {
    const created = await t.admin<Organization>('POST', '/admin/v1/organizations', 'Organization', { name: `conformance ${s.id} ${org}` });
    b.set(`${org}.org_id`, created.org_id);
  }
  const orgId = (org: string) => {
    if (!b.has(`${org}.org_id`)) throw new Error(`${s.file}: fixture organization ${org} is not in fixtures.orgs`);
    return String(b.get(`${org}.org_id`));
  };
  for (const [name, org] of Object.entries(fixtures.apps ?? {})) {
    const app = await t.admin<AppCreated>('POST', `/admin/v1/organizations/${orgId(org)}/apps`, 'AppCreated', { name: `${s.id} ${name}` });
    b.set(`${name}.app_id`, app.app_id).set(`${name}.token`, app.token);
    kinds.set(name, 'app');
  }
  for (const [name, a] of Object.entries(fixtures.agents ?? {})) {
    const body = { name: a.name ?? `${s.id} ${name}`, ...(a.description !== undefined ? { description: a.description } : {}), ...(a.ttl_days ? { ttl_days: a.ttl_days } : {}) };
    const agent = await t.admin<AgentCreated>('POST', `/admin/v1/organizations/${orgId(a.org)}/agents`, 'AgentCreated', body);
    b.set(`${name}.agent_id`, agent.agent_id).set(`${name}.token`, agent.token).set(`${name}.name`, agent.name).set(`${name}.description`, agent.description);
    kinds.set(name, 'agent');
    if (a.allowlist) {
      const ids = a.allowlist.map((app) => String(b.get(`${app}.app_id`)));
      await t.admin('PUT', `/admin/v1/agents/${agent.agent_id}/allowlist`, 'Agent', { app_ids: ids });
    }
  }
}

export async function runScenario(s: Scenario, ctx: RunContext): Promise<Outcome> {
  const started = performance.now();
  const transcript = new Transcript();
  const done = (status: Outcome['status'], extra: Partial<Outcome> = {}): Outcome => ({
    status,
    durationMs: Math.round(performance.now() - started),
    transcript: transcript.lines,
    ...extra,
  });
  const skip = skipReason(s, ctx);
  if (skip) return done('skipped', { reason: skip });

  const bindings: Bindings = new Map();
  const kinds = new Map<string, Endpoint>();
  const actors = new Map<string, Actor>();
  let index = 0;
  let failingChecks: string[] | undefined;
  try {
    await provision(s, ctx, bindings, kinds);
    const runSteps = async (steps: Step[]): Promise<void> => {
      for (const step of steps) {
        index++;
        const checks = (Object.values(step)[0] as { checks?: string[] } | undefined)?.checks;
        try {
          await runStep(step, { ctx, bindings, kinds, actors, transcript, runSteps });
        } catch (err) {
          failingChecks ??= checks;
          throw err;
        }
      }
    };
    await runSteps(s.steps);
    return done('passed');
  } catch (err) {
    const reason = err instanceof StepFailure || err instanceof ProtocolViolation ? err.message : `${(err as Error).message}`;
    return done('failed', { reason, failedStep: index, failedRequirements: failingChecks ?? s.requirements });
  } finally {
    for (const a of actors.values()) a.terminate();
  }
}

interface StepEnv {
  ctx: RunContext;
  bindings: Bindings;
  kinds: Map<string, Endpoint>;
  actors: Map<string, Actor>;
  transcript: Transcript;
  runSteps(steps: Step[]): Promise<void>;
}

function actorOf(env: StepEnv, name: string): Actor {
  const actor = env.actors.get(name);
  if (!actor) throw new StepFailure(`no connected actor ${name}`);
  return actor;
}

const value = (env: StepEnv, v: unknown) => expand(interpolate(v, env.bindings));

async function runStep(step: Step, env: StepEnv): Promise<void> {
  const { ctx, bindings, transcript } = env;
  const [kind, args] = Object.entries(step)[0] as [string, Record<string, any>];
  const timeout = Number(args.timeoutMs ?? ctx.timeoutMs);
  switch (kind) {
    case 'connect': {
      const as = args.as ?? args.actor;
      const endpoint: Endpoint = args.endpoint ?? env.kinds.get(as) ?? (args.actor.startsWith('agent') ? 'agent' : 'app');
      const token = args.token !== undefined ? (args.token === null ? undefined : String(value(env, args.token))) : (bindings.get(`${as}.token`) as string | undefined);
      const carrier: Carrier = args.carrier ?? (token ? 'header' : 'none');
      env.actors.get(args.actor)?.terminate();
      const queryToken = args.queryToken === undefined ? undefined : String(value(env, args.queryToken));
      env.actors.set(args.actor, await Actor.connect({ name: args.actor, wsBase: ctx.target.options.url, endpoint, token, carrier, queryToken, transcript, timeoutMs: timeout }));
      return;
    }
    case 'send': {
      const actor = actorOf(env, args.actor);
      if (args.raw !== undefined) return actor.send(String(value(env, args.raw)));
      return actor.send(value(env, args.frame));
    }
    case 'expect': {
      const frame = await actorOf(env, args.actor).next(timeout);
      const captured: Bindings = new Map();
      const why = mismatch(args.frame, frame, bindings, captured);
      if (why) throw new StepFailure(`${args.actor} expected ${JSON.stringify(args.frame)}; ${why}`);
      for (const [k, v] of captured) bindings.set(k, v);
      return;
    }
    case 'collect': {
      // `count` frames, each matching one of `each`, and at least one matching `some` (rate limits, bursts).
      const actor = actorOf(env, args.actor);
      let someSeen = !args.some;
      for (let i = 0; i < Number(args.count); i++) {
        const frame = await actor.next(timeout);
        const fits = (args.each as unknown[]).some((p) => !mismatch(p, frame, bindings, new Map()));
        if (!fits) throw new StepFailure(`${args.actor} frame ${i + 1} of ${args.count} fits none of ${JSON.stringify(args.each)}: ${JSON.stringify(frame)}`);
        if (args.some && !mismatch(args.some, frame, bindings, new Map())) someSeen = true;
      }
      if (!someSeen) throw new StepFailure(`${args.actor}: none of ${args.count} frames matched ${JSON.stringify(args.some)}`);
      return;
    }
    case 'expectClose': {
      const actor = actorOf(env, args.actor);
      const info = await actor.closed(timeout);
      if (actor.pending > 0) throw new StepFailure(`${args.actor} closed with ${actor.pending} frame(s) not yet expected; expect them before the close`);
      if (info.code !== args.code) throw new StepFailure(`${args.actor} expected close ${args.code}, got ${info.code} ${info.reason}`);
      if (args.reason !== undefined && info.reason !== args.reason) throw new StepFailure(`${args.actor} expected close reason ${args.reason}, got ${JSON.stringify(info.reason)}`);
      return;
    }
    case 'expectSilence': {
      // The bridge answers in order, so if the next frame after a ping is its pong, nothing else was pending.
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
    case 'advanceClock': {
      const keepAlive = args.keepAlive !== false;
      for (let left = Number(args.ms); left > 0; ) {
        const stepMs = keepAlive ? Math.min(left, HEARTBEAT_MS) : left;
        if (ctx.hasClock) await ctx.target.advanceClock(stepMs);
        else await new Promise((resolve) => setTimeout(resolve, stepMs));
        left -= stepMs;
        transcript.add('clock', 'note', `advanced ${stepMs} ms`);
        if (!keepAlive) continue;
        for (const actor of env.actors.values()) {
          if (!actor.isOpen) continue;
          actor.send({ type: 'ping' });
          await actor.take('pong', timeout);
        }
      }
      return;
    }
    case 'http': {
      const base = args.base === 'admin' ? ctx.target.options.adminUrl : ctx.target.v1Base;
      const token = args.token === 'admin' ? ctx.target.options.adminToken : args.token === undefined || args.token === 'none' ? undefined : String(value(env, args.token));
      const path = String(value(env, args.path));
      const answer = await ctx.target.call(args.method ?? 'GET', `${base.replace(/\/$/, '')}${path}`, token, args.body === undefined ? undefined : value(env, args.body));
      transcript.add('http', 'note', `${args.method ?? 'GET'} ${path} -> ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
      if (args.status !== undefined && answer.status !== args.status) throw new StepFailure(`${args.method ?? 'GET'} ${path}: expected ${args.status}, got ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
      if (args.expect !== undefined) {
        const captured: Bindings = new Map();
        const why = mismatch(args.expect, answer.body, bindings, captured);
        if (why) throw new StepFailure(`${path}: ${why}`);
        for (const [k, v] of captured) bindings.set(k, v);
      }
      return;
    }
    case 'rotateToken': {
      const name = args.target as string;
      const kind = env.kinds.get(name);
      const id = bindings.get(`${name}.${kind}_id`);
      const rotated = await ctx.target.admin<{ token: string }>('POST', `/admin/v1/${kind}s/${id}/rotate-token`, kind === 'app' ? 'AppTokenRotated' : 'AgentTokenRotated');
      bindings.set(`${name}.previous_token`, bindings.get(`${name}.token`)).set(`${name}.token`, rotated.token);
      return;
    }
    case 'deactivate': {
      const name = args.target as string;
      const kind = env.kinds.get(name);
      await ctx.target.admin('POST', `/admin/v1/${kind}s/${bindings.get(`${name}.${kind}_id`)}/deactivate`, kind === 'app' ? 'App' : 'Agent');
      return;
    }
    case 'setAllowlist': {
      const ids = args.apps === null ? null : (args.apps as string[]).map((a) => String(bindings.get(`${a}.app_id`)));
      await ctx.target.admin('PUT', `/admin/v1/agents/${bindings.get(`${args.agent}.agent_id`)}/allowlist`, 'Agent', { app_ids: ids });
      return;
    }
    case 'repeat': {
      for (let i = 0; i < Number(args.times); i++) {
        bindings.set(args.as ?? 'i', i);
        await env.runSteps(args.steps);
      }
      return;
    }
    default:
      throw new StepFailure(`unknown step ${kind}`);
  }
}
