// Steps about time and repetition: moving the target's clock, and running steps again.
import { LIMITS } from '../../generated/index.js';
import { value, type StepHandler } from './env.js';

/**
 * Moves the target's time. With `keepAlive` (the default) every open actor pings, as live clients do: every heartbeat
 * period (LIMITS.heartbeatIntervalMs) of target time when the target closes idle connections, once at the end when its
 * settings say it never does or no actor is open (nothing to keep alive; no step opens one during the move). Fewer
 * calls: one clock call instead of thousands for a day, and each is a request to the provisioning means.
 */
export const advanceClock: StepHandler<'advanceClock'> = async (args, env, timeoutMs) => {
  const { ctx, transcript } = env;
  const keepAlive = args.keepAlive !== false;
  const anyOpen = [...env.actors.values()].some((actor) => actor.isOpen);
  const period = keepAlive && anyOpen && ctx.settings.idle_close_ms !== null ? LIMITS.heartbeatIntervalMs : Infinity;
  for (let left = Number(value(env, args.ms)); left > 0;) {
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
};

/** The steps `times` times, `${as}` (default `${i}`) counting from 0. */
export const repeat: StepHandler<'repeat'> = async (args, env) => {
  const times = Number(value(env, args.times));
  for (let i = 0; i < times; i++) {
    env.bindings.set(args.as ?? 'i', i);
    await env.runSteps(args.steps);
  }
};
