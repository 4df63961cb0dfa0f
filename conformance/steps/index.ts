// What each kind of scenario step does (README "Scenario files"): one handler per kind, in a map typed by the
// step union of spec/conformance.yaml, so a kind added to the schema without a handler fails the type check. A
// step throws StepFailure when the target does not do what it expects; `requirement` narrows the blame to one
// decision (a `$ours` pattern, a refusal's form).
import { close, connect, drop, expectClose, expectOneClosed, refused } from './connections.js';
import type { StepEnv, StepHandler } from './env.js';
import { collect, expect, expectSilence, send } from './frames.js';
import { unpack, type Step, type StepArgsMap } from './kinds.js';
import { deactivate, http, listSessions, rotateToken, setAllowlist } from './target.js';
import { advanceClock, repeat } from './time.js';

export { Barrier, Consequence, StepFailure, type StepEnv } from './env.js';

const HANDLERS: { [K in keyof StepArgsMap]: StepHandler<K> } = {
  connect,
  refused,
  close,
  drop,
  expectClose,
  expectOneClosed,
  send,
  expect,
  collect,
  expectSilence,
  http,
  rotateToken,
  deactivate,
  setAllowlist,
  listSessions,
  advanceClock,
  repeat,
};

/** Generic in the kind so the handler and its fields stay paired (TypeScript's correlated-union pattern). */
function dispatch<K extends keyof StepArgsMap>(
  kind: K,
  args: StepArgsMap[K],
  env: StepEnv,
  timeoutMs: number,
): Promise<void> | void {
  return HANDLERS[kind](args, env, timeoutMs);
}

export async function runStep(step: Step, env: StepEnv): Promise<void> {
  const { kind, args } = unpack(step);
  await dispatch(kind, args, env, Number(args.timeoutMs ?? env.ctx.timeoutMs));
}
