// Steps about frames: sending one, and what the target must (or must not) send back.
import { mismatch } from '../match.js';
import { NothingArrived } from '../actor.js';
import { actorOf, Barrier, Consequence, judge, StepFailure, value, type StepEnv, type StepHandler } from './env.js';

export const send: StepHandler<'send'> = (args, env) => {
  const actor = actorOf(env, args.actor);
  if (args.mark) env.marks.set(args.mark, performance.now());
  if (args.raw !== undefined) return actor.send(String(value(env, args.raw)));
  return actor.send(value(env, args.frame));
};

export const expect: StepHandler<'expect'> = async (args, env, timeoutMs) => {
  const wanted = typeOf(args.frame);
  const what = `${args.actor} expected ${JSON.stringify(args.frame)}`;
  const actor = actorOf(env, args.actor);
  let frame: Record<string, unknown>;
  try {
    frame = await actor.next(timeoutMs, wanted);
  } catch (err) {
    if (args.needs && err instanceof NothingArrived) throw new Barrier(`${what}: ${err.message}`, args.needs);
    throw err;
  }
  try {
    const captured = judge(env, args.frame, frame, what);
    if (captured.length && actor.broke(frame).length) env.taintedBy ??= actor.broke(frame);
  } catch (err) {
    const broke = actor.broke(frame);
    if (broke.length && err instanceof StepFailure) throw new Consequence(err.message, broke);
    // The frame the step relies on came, but not as its rule says (a token out of order): that rule's failure.
    if (args.needs && wanted !== undefined && frame.type === wanted && err instanceof StepFailure && !err.requirement)
      throw new Barrier(err.message, args.needs);
    throw err;
  }
  // When the frame reached the suite, not when this step read it: frames wait in their connection's queue.
  const arrived = actor.arrivedAt(frame) ?? performance.now();
  if (args.notBefore) notBefore(env, args.actor, arrived, args.notBefore);
  if (args.mark) env.marks.set(args.mark, arrived);
};

/** The frame type a pattern waits for, when it names one plainly. */
const typeOf = (pattern: unknown): string | undefined => {
  const type = (pattern as { type?: unknown } | undefined)?.type;
  return typeof type === 'string' ? type : undefined;
};

/**
 * The frame arrived no earlier than `toleranceMs` before the mark (a frame on another connection): what one
 * connection receives cannot be ordered exactly against another's, so the scenario says how much it allows.
 */
function notBefore(env: StepEnv, actor: string, arrived: number, bound: { mark: string; toleranceMs: number }): void {
  const mark = env.marks.get(bound.mark);
  if (mark === undefined) throw new StepFailure(`no step marked ${bound.mark}`);
  const early = mark - arrived;
  if (early > bound.toleranceMs)
    throw new StepFailure(
      `${actor}'s frame arrived ${Math.round(early)} ms before ${bound.mark} (at most ${bound.toleranceMs} ms allowed)`,
    );
}

/** `count` frames, each matching one of `each`, and at least one matching `some` (rate limits, bursts). */
export const collect: StepHandler<'collect'> = async (args, env, timeoutMs) => {
  const actor = actorOf(env, args.actor);
  const count = Number(value(env, args.count));
  let someSeen = !args.some;
  const types = new Set<unknown>();
  for (let i = 0; i < count; i++) {
    const frame = await actor.next(timeoutMs).catch((err: unknown) => {
      // Pongs the burst's pings were owed and none came: the pong's rule, not what the burst checks; else, when
      // accepted answers were among those awaited, whether an agent holds the event decides (run.ts).
      if (!(err instanceof NothingArrived)) throw err;
      const owedPong = args.each.some((p) => typeOf(p) === 'pong') && !types.has('pong');
      const awaited = owedPong ? 'pong' : args.each.some((p) => typeOf(p) === 'accepted') ? 'accepted' : undefined;
      throw new NothingArrived(`${err.message}, ${i} of ${count} frames came`, err.actor, err.endpoint, awaited);
    });
    types.add(frame.type);
    const fits = args.each.some((p) => !mismatch(p, frame, env.bindings, new Map()));
    if (!fits && actor.broke(frame).length)
      throw new Consequence(
        `${args.actor} frame ${i + 1} of ${count} is no message of the protocol`,
        actor.broke(frame),
      );
    if (!fits)
      throw new StepFailure(
        `${args.actor} frame ${i + 1} of ${count} fits none of ${JSON.stringify(args.each)}: ${JSON.stringify(frame)}`,
      );
    if (args.some && !mismatch(args.some, frame, env.bindings, new Map())) someSeen = true;
  }
  if (!someSeen) throw new StepFailure(`${args.actor}: none of ${count} frames matched ${JSON.stringify(args.some)}`);
};

/** Answers come in order, so if the next frame after a ping is its pong, nothing else was pending. */
export const expectSilence: StepHandler<'expectSilence'> = async (args, env, timeoutMs) => {
  const actor = actorOf(env, args.actor);
  actor.send({ type: 'ping' });
  const frame = await actor.next(timeoutMs, 'pong');
  if (frame.type !== 'pong')
    throw new StepFailure(`${args.actor} expected nothing before its pong, got ${JSON.stringify(frame)}`);
};
