// An app's event to an agent, as the tests that need one under way (or done) begin it.
import { expect } from 'chai';
import type { AcceptedMessage } from '../../generated/index.js';
import type { AgentClient, AppClient } from './ws-client.js';

/** Sends an event to `agentId`: the app gets `accepted` (returned) and the agent the event of that id, both next. */
export async function startEvent(
  appClient: AppClient,
  agentClient: AgentClient,
  agentId: string,
  threadId = 't',
  payload: object = {},
): Promise<AcceptedMessage> {
  appClient.send({ type: 'event', agent_id: agentId, thread_id: threadId, payload });
  const accepted = await appClient.expect('accepted');
  expect((await agentClient.expect('event')).event_id).to.equal(accepted.event_id);
  return accepted;
}

/** One whole event: started, then replied to at once (`ok`, done), the reply reaching the app. Returns the `accepted`. */
export async function exchange(
  appClient: AppClient,
  agentClient: AgentClient,
  agentId: string,
  threadId = 't',
): Promise<AcceptedMessage> {
  const accepted = await startEvent(appClient, agentClient, agentId, threadId);
  agentClient.send({ type: 'reply', event_id: accepted.event_id, content: 'ok', done: true });
  expect((await appClient.expect('reply')).event_id).to.equal(accepted.event_id);
  return accepted;
}

/** The secrets `timedEvent` sends: none of them may appear in what the bridge logs or exports. */
export const TIMED_EVENT_SECRETS = ['lesson-secret', 'payload-secret', 'token-secret', 'reply-secret'];

/**
 * One whole event on a frozen test clock, timed: the agent streams a fragment 40 ms after the event arrived and
 * replies 60 ms after that, with a secret in the thread id, the payload, the fragment and the reply. Returns its id.
 */
export async function timedEvent(
  clock: { advance(ms: number): void },
  appClient: AppClient,
  agentClient: AgentClient,
  agentId: string,
): Promise<string> {
  const { event_id } = await startEvent(appClient, agentClient, agentId, 'lesson-secret', { q: 'payload-secret' });
  clock.advance(40);
  agentClient.send({ type: 'token', event_id, token: 'token-secret' });
  await appClient.expect('token');
  clock.advance(60);
  agentClient.send({ type: 'reply', event_id, content: 'reply-secret', done: true });
  await appClient.expect('reply');
  return event_id;
}
