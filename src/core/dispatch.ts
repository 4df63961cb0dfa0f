// A handler per message type, typed from a generated union: a map that lacks a type of the union does not
// compile, and neither does a switch whose default is `unhandled`, so a message added to the spec cannot go
// unanswered (test/core/dispatch.test.ts proves both). The switch is for paths run per fragment.

/** One handler for each `type` of the union `U`, given that message narrowed and the context `C`. */
export type HandlerMap<U extends { type: string }, C, R> = {
  readonly [K in U['type']]: (message: Extract<U, { type: K }>, context: C) => R;
};

/** Calls the handler of the message's type. */
export function dispatch<U extends { type: string }, C, R>(handlers: HandlerMap<U, C, R>, message: U, context: C): R {
  const handler = handlers[message.type as U['type']] as (message: U, context: C) => R;
  return handler(message, context);
}

/** The default of a switch over a union's `type`: reached only by a type without a case, which `tsc` refuses. */
export function unhandled(message: never): never {
  throw new Error(`no handler for a message of type ${(message as { type?: unknown }).type}`);
}
