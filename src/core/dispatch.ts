// A handler per message type, typed from a generated union: a map that lacks a type of the union does not
// compile, so a message added to the spec cannot go unanswered (test/core/dispatch.test.ts proves it).

/** One handler for each `type` of the union `U`, given that message narrowed and the context `C`. */
export type HandlerMap<U extends { type: string }, C, R> = {
  readonly [K in U['type']]: (message: Extract<U, { type: K }>, context: C) => R;
};

/** Calls the handler of the message's type. */
export function dispatch<U extends { type: string }, C, R>(handlers: HandlerMap<U, C, R>, message: U, context: C): R {
  const handler = handlers[message.type as U['type']] as (message: U, context: C) => R;
  return handler(message, context);
}
