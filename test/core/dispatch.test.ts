// The app side's handler map and the agent side's switches are typed from the generated unions: a map that lacks a
// type, or a switch without its case, does not compile (the @ts-expect-error lines fail `npm run typecheck` the day
// it would), and each message reaches the handler of its own type.
import { expect } from 'chai';
import type { AgentToServiceMessage, AppToServiceMessage } from '../../generated/index.js';
import { dispatch, unhandled, type HandlerMap } from '../../src/core/dispatch.js';

/** A message the spec might add one day: until a handler exists for it, nothing compiles. */
type PauseMessage = { type: 'pause'; event_id: string };

const appHandlers: HandlerMap<AppToServiceMessage, string[], string> = {
  ping: (_, seen) => (seen.push('ping'), 'pong'),
  discover: (_, seen) => (seen.push('discover'), 'agents'),
  event: (m, seen) => (seen.push('event'), m.agent_id),
  resume: (m, seen) => (seen.push('resume'), m.event_id),
  cancel: (m, seen) => (seen.push('cancel'), m.event_id),
};

// @ts-expect-error a map without `resume` must not compile
export const lacksResume: HandlerMap<AppToServiceMessage, void, void> = {
  ping() {},
  discover() {},
  event() {},
  cancel() {},
};

// @ts-expect-error the app side's handlers, with a `pause` added to the union: `pause` has no handler
export const withPause: HandlerMap<AppToServiceMessage | PauseMessage, string[], string> = appHandlers;

// @ts-expect-error a map without `error` must not compile
export const lacksError: HandlerMap<AgentToServiceMessage, void, void> = { ping() {}, token() {}, reply() {} };

/** The agent side's form (a switch per fragment): a type without a case reaches `unhandled`, which takes `never`. */
export function agentFrame(message: AgentToServiceMessage): string {
  switch (message.type) {
    case 'ping':
      return 'pong';
    case 'token':
    case 'reply':
    case 'error':
      return message.event_id;
    default:
      return unhandled(message);
  }
}

export function forgetsError(message: AgentToServiceMessage): string {
  switch (message.type) {
    case 'ping':
      return 'pong';
    case 'token':
    case 'reply':
      return message.event_id;
    default:
      // @ts-expect-error a switch without `error` must not compile
      return unhandled(message);
  }
}

describe('the handler maps (exhaustive dispatch)', () => {
  it("hands each message to its own type's handler, narrowed", () => {
    const seen: string[] = [];
    expect(dispatch(appHandlers, { type: 'ping' }, seen)).to.equal('pong');
    const event: AppToServiceMessage = { type: 'event', agent_id: 'agt_1', thread_id: 't', payload: {} };
    expect(dispatch(appHandlers, event, seen)).to.equal('agt_1');
    const resume: AppToServiceMessage = { type: 'resume', event_id: 'e1', resume_token: 'r', after_seq: 0 };
    expect(dispatch(appHandlers, resume, seen)).to.equal('e1');
    expect(seen).to.deep.equal(['ping', 'event', 'resume']);
  });

  it('names the type a switch had no case for, should a message the types did not foresee reach it', () => {
    expect(agentFrame({ type: 'token', event_id: 'e1', token: 'a' })).to.equal('e1');
    expect(() => agentFrame({ type: 'cancel' } as unknown as AgentToServiceMessage)).to.throw('type cancel');
  });
});
