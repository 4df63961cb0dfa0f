// Agent-only scenarios: answers (tokens within the fragment limit, one reply or error, never silence), errors
// from the bridge, and the end of a replaced connection.
import { CLOSE_CODES } from '../../../generated/index.js';
import { answered, answerOf, connected, forEvent, nothingAfter, sendEvent } from '../checks.js';
import type { ReceivedFrame } from '../mock-bridge.js';
import type { ClientScenario } from '../run.js';

/** Text longer than one fragment may be, in two- and four-byte characters: an echoing agent must split it. */
const LONG_TEXT = `${'é'.repeat(3000)} ${'😀'.repeat(2000)} the end`;

export const agentStreamsAndReplies: ClientScenario = {
  id: 'agent-streams-and-replies',
  role: 'agent',
  title:
    'An agent streams tokens within the fragment limit, then sends exactly one reply (or an error), also for a long text',
  requirements: ['CLI-009', 'CLI-001', 'CLI-006', 'CLI-007'],
  async script(ctx) {
    await connected(ctx, ['CLI-009']);
    ctx.next();
    for (const text of ['hello from the conformance suite, please stream this back', LONG_TEXT]) {
      const from = ctx.mock.frames.length;
      const eventId = sendEvent(ctx, text);
      const end = await answered(ctx, eventId, from, { checkFragments: ['CLI-006'], requirements: ['CLI-007'] });
      ctx.next();
      await nothingAfter(ctx, eventId, end, ['CLI-007']);
    }
  },
};

export const agentAnswersEveryEvent: ClientScenario = {
  id: 'agent-answers-every-event',
  role: 'agent',
  title: 'An agent answers every event with a reply or an error, never silence',
  requirements: ['CLI-009', 'CLI-001', 'CLI-007'],
  async script(ctx) {
    await connected(ctx, ['CLI-009']);
    ctx.next();
    const from = ctx.mock.frames.length;
    const ids = [1, 2, 3].map((i) => sendEvent(ctx, `event number ${i}`, `thread-${i}`));
    const ends: ReceivedFrame[] = [];
    for (const id of ids) ends.push(await answered(ctx, id, from, { requirements: ['CLI-007'] }));
    ctx.next();
    for (const [i, id] of ids.entries()) await nothingAfter(ctx, id, ends[i]!, ['CLI-007']);
  },
};

export const agentHandlesInvalidEventId: ClientScenario = {
  id: 'agent-handles-invalid-event-id',
  role: 'agent',
  title: 'An agent told INVALID_EVENT_ID for an event keeps working and answers the next event',
  requirements: ['CLI-009', 'CLI-001', 'CLI-007', 'CLI-008'],
  async script(ctx) {
    const connection = await connected(ctx, ['CLI-009']);
    ctx.next();
    const from = ctx.mock.frames.length;
    const first = sendEvent(ctx, 'this event will be forgotten by the bridge');
    await answerOf(ctx, first, () => ctx.framesSince(from).find(forEvent(first)), 'nothing', ['CLI-007']);
    ctx.next();
    ctx.mock.send(
      { type: 'error', event_id: first, code: 'INVALID_EVENT_ID', error: `Unknown or finished event ${first}.` },
      connection,
    );
    await ctx.pause(300);
    const next = ctx.mock.frames.length;
    const second = sendEvent(ctx, 'and this one must still be answered');
    if (!ctx.mock.isOpen()) ctx.fail('the client closed its connection after INVALID_EVENT_ID', ['CLI-008']);
    await answered(ctx, second, next, { requirements: ['CLI-008'] });
  },
};

/** How long a replaced agent is watched for a new handshake. */
const REPLACED_WATCH_MS = 5_000;

export const agentConnectionReplaced: ClientScenario = {
  id: 'agent-connection-replaced',
  role: 'agent',
  title:
    'An agent whose connection is replaced (CONNECTION_REPLACED, 4409) does not reconnect: another instance holds it',
  requirements: ['CLI-009', 'CLI-001', 'CLI-016'],
  async script(ctx) {
    const connection = await connected(ctx, ['CLI-009']);
    ctx.next();
    const attempts = ctx.mock.attempts.length;
    ctx.mock.send(
      {
        type: 'error',
        code: 'CONNECTION_REPLACED',
        error: "Another connection with this agent's token replaced this one.",
      },
      connection,
    );
    ctx.mock.closeConnection(CLOSE_CODES.CONNECTION_REPLACED, 'CONNECTION_REPLACED', connection);
    await ctx.pause(REPLACED_WATCH_MS);
    const again = ctx.mock.attempts.length - attempts;
    if (again > 0)
      ctx.fail(
        `the agent connected again ${again} time(s) within ${REPLACED_WATCH_MS / 1000} s of CONNECTION_REPLACED: two instances would take the agent's one connection from each other`,
        ['CLI-016'],
      );
    ctx.held(['CLI-016']);
  },
};

export const AGENT_SCENARIOS = [
  agentStreamsAndReplies,
  agentAnswersEveryEvent,
  agentHandlesInvalidEventId,
  agentConnectionReplaced,
];
