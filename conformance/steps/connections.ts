// Steps about connections: opening one (connect), a handshake that must be refused, closing or dropping one, and
// closes the target must make.
import {
  ERRORS,
  validateErrorCode,
  type ClientKind,
  type ConnectArgs,
  type RefusedArgs,
} from '../../generated/index.js';
import { Actor, type Carrier, type HttpRefusal } from '../actor.js';
import { actorOf, judges, StepFailure, value, type StepEnv, type StepHandler } from './env.js';

function connectOptions(env: StepEnv, args: ConnectArgs | RefusedArgs, timeoutMs: number) {
  const as = args.as ?? args.actor;
  const endpoint: ClientKind = args.endpoint ?? env.kinds.get(as) ?? (args.actor.startsWith('agent') ? 'agent' : 'app');
  const token =
    args.token !== undefined
      ? args.token === null
        ? undefined
        : String(value(env, args.token))
      : (env.bindings.get(`${as}.token`) as string | undefined);
  const carrier: Carrier = args.carrier ?? (token ? 'header' : 'none');
  const queryToken = args.queryToken === undefined ? undefined : String(value(env, args.queryToken));
  const wsBase = env.placement.connection(args.actor, as, env.kinds.get(as) ?? endpoint);
  const node = env.placement.several ? wsBase : undefined;
  const resume = 'resume' in args ? args.resume : undefined;
  const cancel = 'cancel' in args ? args.cancel : undefined;
  return {
    name: args.actor,
    wsBase,
    node,
    endpoint,
    token,
    carrier,
    queryToken,
    resume,
    cancel,
    resumeTokens: env.resumeTokens,
    transcript: env.transcript,
    timeoutMs,
    profile: env.ctx.profile,
    ledger: env.ledger,
  };
}

export const connect: StepHandler<'connect'> = async (args, env, timeoutMs) => {
  env.actors.get(args.actor)?.terminate('the name is connected again');
  env.actors.set(args.actor, await Actor.connect(connectOptions(env, args, timeoutMs)));
};

/**
 * A refused handshake. The protocol names the code but not how it is reported, so any clear report passes: an
 * `error` frame with the code, a close whose reason names it, or an HTTP refusal whose body names it. `form` (a
 * decision, W1) additionally requires one error frame without event_id, then the catalogue's close code with the
 * code as reason.
 */
export const refused: StepHandler<'refused'> = async (args, env, timeoutMs) => {
  env.actors.get(args.actor)?.terminate('the name is connected again');
  const code = args.code;
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
    throw new StepFailure(
      `${args.actor} expected a refusal with ${code}; got ${frame ? JSON.stringify(frame) : 'no frame'} and ${closeInfo ? `close ${closeInfo.code} ${JSON.stringify(closeInfo.reason)}` : 'no close'}`,
    );
  }
  if (!closeInfo) throw new StepFailure(`${args.actor} was told ${code} but the connection stayed open`);
  if (args.form && judges(env)(args.form)) {
    const closeCode = validateErrorCode(code) ? ERRORS[code].closeCode : undefined;
    const form = !saidInFrame
      ? 'no error frame before the close'
      : 'event_id' in frame!
        ? `the error frame has an event_id`
        : closeInfo.code !== closeCode
          ? `close code ${closeInfo.code}, expected ${closeCode}`
          : closeInfo.reason !== code
            ? `close reason ${JSON.stringify(closeInfo.reason)}, expected ${code}`
            : attempt.pending > 0
              ? `${attempt.pending} more frame(s) before the close`
              : undefined;
    if (form) throw new StepFailure(`${args.actor} refusal with ${code}: ${form}`, args.form);
  }
};

function refusedOverHttp(env: StepEnv, args: RefusedArgs, refusal: HttpRefusal, code: string): void {
  if (!refusal.body.includes(code)) {
    throw new StepFailure(
      `${args.actor} expected a refusal with ${code}; the upgrade was answered with HTTP ${refusal.status} without naming it: ${refusal.body.slice(0, 200)}`,
    );
  }
  if (args.form && judges(env)(args.form))
    throw new StepFailure(
      `${args.actor} refusal with ${code} came as HTTP ${refusal.status}, not as an error frame and a close (W1)`,
      args.form,
    );
}

export const close: StepHandler<'close'> = async (args, env, timeoutMs) => {
  const actor = actorOf(env, args.actor);
  actor.close();
  await actor.closed(timeoutMs).catch(() => actor.terminate());
  env.actors.delete(args.actor);
};

/** The connection dies without a close frame (a phone in a tunnel): what the resume extension is for. */
export const drop: StepHandler<'drop'> = (args, env) => {
  actorOf(env, args.actor).drop();
  env.actors.delete(args.actor);
};

export const expectClose: StepHandler<'expectClose'> = async (args, env, timeoutMs) => {
  const actor = actorOf(env, args.actor);
  const info = await actor.closed(timeoutMs);
  if (actor.pending > 0)
    throw new StepFailure(
      `${args.actor} closed with ${actor.pending} frame(s) not yet expected; expect them before the close`,
    );
  if (args.code !== undefined && info.code !== args.code)
    throw new StepFailure(`${args.actor} expected close ${args.code}, got ${info.code} ${info.reason}`);
  if (args.reason !== undefined && info.reason !== args.reason)
    throw new StepFailure(`${args.actor} expected close reason ${args.reason}, got ${JSON.stringify(info.reason)}`);
};

/** Of two connections, exactly one is closed within the timeout and the other still answers a ping. */
export const expectOneClosed: StepHandler<'expectOneClosed'> = async (args, env, timeoutMs) => {
  const [a, b] = args.actors.map((n) => actorOf(env, n));
  const deadline = Date.now() + timeoutMs;
  while (a!.isOpen && b!.isOpen && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const open = [a!, b!].filter((x) => x.isOpen);
  if (open.length !== 1)
    throw new StepFailure(
      `of ${args.actors.join(' and ')}, expected exactly one to stay open; ${open.length} are open after ${timeoutMs} ms`,
    );
  const survivor = open[0]!;
  survivor.send({ type: 'ping' });
  await survivor.take('pong', timeoutMs);
  if (args.alias) env.actors.set(args.alias, survivor);
};
