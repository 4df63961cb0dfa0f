// What this node does with each change or question another node sends (control.ts): one handler per op, each
// written next to the part it acts on and put together where the bridge is. A mapped type over the ops, so that an
// op added without a handler fails the typecheck instead of being ignored on the other nodes.
import type { ControlAnswer, ControlOp } from './control.js';

export type ControlOpName = ControlOp['op'];

export type ControlChange<K extends ControlOpName> = Extract<ControlOp, { op: K }>;

/** A change is done when its handler returns (or its promise resolves); a question's handler returns the answer. */
type Reply<A> = [A] extends [undefined] ? void | Promise<void> : A | Promise<A>;

export type ControlHandlers = {
  [K in ControlOpName]: (change: ControlChange<K>) => Reply<ControlAnswer<ControlChange<K>>>;
};

/** Runs the handler of `change.op`. */
export function applyChange(handlers: ControlHandlers, change: ControlOp): unknown {
  // TypeScript does not relate `handlers[change.op]` to `change` itself (a union of ops); the mapped type does.
  const handle = handlers[change.op] as (change: ControlOp) => unknown;
  return handle(change);
}
