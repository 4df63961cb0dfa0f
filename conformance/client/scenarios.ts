// The client role's scenarios: small scripts that drive the mock bridge and judge the client. What a client
// command does is keyed by BRIDGE_SCENARIO (see conformance/README.md, "Client role"). Each failure names the
// requirements (CLI-…, requirements.yaml) its check enforces; every frame is also checked against the schema
// (CLI-001) by the runner.
import { LIMITS, validateEventToAgentMessage } from '../../generated/index.js';
import type { ReceivedFrame } from './mock-bridge.js';
import { MOCK_AGENT_ID, MOCK_APP_ID, type ClientContext, type ClientScenario } from './run.js';

/** How long an agent has to answer an event. */
const ANSWER_MS = 10_000;
/** How long after its reply or error an agent's further frames for the event are watched for. */
const AFTER_END_MS = 500;
const APP_EVENT = { agent_id: 'echo-agent', thread_id: 'conformance', payload: { text: 'hello' } };

// ---- helpers -------------------------------------------------------------------------------------------------------

async function connected(ctx: ClientContext, requirements: string[]): Promise<number> {
  return ctx.waitFor(() => ctx.mock.connection, ctx.connectTimeoutMs, `the client did not open an authenticated connection to ${ctx.mock.url}/ws/${ctx.scenario.role} (attempts: ${ctx.mock.attempts.map((a) => a.outcome).join(', ') || 'none'})`, requirements);
}

let eventCounter = 0;
function sendEvent(ctx: ClientContext, text: string, thread = 'conformance'): string {
  const eventId = `evt${Date.now().toString(36)}${(++eventCounter).toString(36)}`;
  const frame: Record<string, unknown> = { type: 'event', event_id: eventId, app_id: MOCK_APP_ID, thread_id: thread, session_key: `svc:${MOCK_APP_ID}:${thread}`, payload: { text } };
  if (!validateEventToAgentMessage(frame)) throw new Error(`the mock built an invalid event: ${JSON.stringify(validateEventToAgentMessage.errors)}`);
  ctx.mock.send(frame);
  return eventId;
}

const forEvent = (eventId: string) => (f: ReceivedFrame) => f.frame?.event_id === eventId;
const isEnd = (f: ReceivedFrame) => f.frame?.type === 'reply' || f.frame?.type === 'error';

/** Waits for the event's reply or error; checks its tokens come before it and (optionally) fit the limit. */
async function answered(ctx: ClientContext, eventId: string, from: number, o: { checkFragments?: string[]; requirements: string[] }): Promise<ReceivedFrame> {
  const fragments = o.checkFragments;
  const end = await ctx.waitFor(
    () => {
      const mine = ctx.framesSince(from).filter(forEvent(eventId));
      if (fragments) {
        for (const f of mine.filter((m) => m.frame?.type === 'token')) {
          const bytes = Buffer.byteLength(String(f.frame?.token), 'utf8');
          if (bytes > LIMITS.tokenFragmentMaxBytes) ctx.fail(`a token fragment of event ${eventId} is ${bytes} UTF-8 bytes, over the limit of ${LIMITS.tokenFragmentMaxBytes}`, fragments);
        }
      }
      return mine.find(isEnd);
    },
    ANSWER_MS,
    `the client sent no reply or error for event ${eventId} (silence leaves the app waiting)`,
    o.requirements,
  );
  return end;
}

/** After the end, nothing more for the event: no late token, no second reply or error. */
async function nothingAfter(ctx: ClientContext, eventId: string, end: ReceivedFrame, requirements: string[]): Promise<void> {
  await ctx.pause(AFTER_END_MS);
  const index = ctx.mock.frames.indexOf(end);
  const late = ctx.framesSince(index + 1).filter(forEvent(eventId));
  if (late.length) ctx.fail(`after its ${end.frame?.type} for event ${eventId} the client sent ${late.map((f) => f.frame?.type).join(', ')} for it: a reply or error must come once, after all tokens`, requirements);
}

// ---- agent scenarios -----------------------------------------------------------------------------------------------

const agentStreamsAndReplies: ClientScenario = {
  id: 'agent-streams-and-replies',
  role: 'agent',
  title: 'An agent streams tokens within the fragment limit, then sends exactly one reply (or an error)',
  requirements: ['CLI-009', 'CLI-001', 'CLI-006', 'CLI-007'],
  async script(ctx) {
    await connected(ctx, ['CLI-009']);
    ctx.next();
    const from = ctx.mock.frames.length;
    const eventId = sendEvent(ctx, 'hello from the conformance suite, please stream this back');
    const end = await answered(ctx, eventId, from, { checkFragments: ['CLI-006'], requirements: ['CLI-007'] });
    ctx.next();
    await nothingAfter(ctx, eventId, end, ['CLI-007']);
  },
};

const agentAnswersEveryEvent: ClientScenario = {
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

const agentHandlesInvalidEventId: ClientScenario = {
  id: 'agent-handles-invalid-event-id',
  role: 'agent',
  title: 'An agent told INVALID_EVENT_ID for an event keeps working and answers the next event',
  requirements: ['CLI-009', 'CLI-001', 'CLI-007', 'CLI-008'],
  async script(ctx) {
    const connection = await connected(ctx, ['CLI-009']);
    ctx.next();
    const from = ctx.mock.frames.length;
    const first = sendEvent(ctx, 'this event will be forgotten by the bridge');
    await ctx.waitFor(() => ctx.framesSince(from).find(forEvent(first)), ANSWER_MS, `the client sent nothing for event ${first}`, ['CLI-007']);
    ctx.next();
    ctx.mock.send({ type: 'error', event_id: first, code: 'INVALID_EVENT_ID', error: `Unknown or finished event ${first}.` }, connection);
    await ctx.pause(300);
    const next = ctx.mock.frames.length;
    const second = sendEvent(ctx, 'and this one must still be answered');
    if (!ctx.mock.isOpen()) ctx.fail(`the client closed its connection after INVALID_EVENT_ID${ctx.client.describeExit()}`, ['CLI-008']);
    await answered(ctx, second, next, { requirements: ['CLI-008'] });
  },
};

// ---- app scenarios -------------------------------------------------------------------------------------------------

/** Answers the app's events like a bridge with an echo agent: accepted, two tokens, the reply. */
function answerEvents(ctx: ClientContext): void {
  let n = 0;
  ctx.mock.on('frame', (f) => {
    if (f.invalid || f.frame?.type !== 'event') return;
    const e = f.frame as { agent_id: string; thread_id: string; payload: Record<string, unknown> };
    const eventId = `evt${(++n).toString(36)}${Date.now().toString(36)}`;
    const sessionKey = `svc:${e.agent_id}:${MOCK_APP_ID}:${e.thread_id}`;
    const text = typeof e.payload.text === 'string' ? e.payload.text : JSON.stringify(e.payload);
    ctx.mock.send({ type: 'accepted', event_id: eventId, agent_id: e.agent_id, session_key: sessionKey, status: 'accepted' }, f.connection);
    ctx.mock.send({ type: 'token', event_id: eventId, agent_id: e.agent_id, token: 'You said: ' }, f.connection);
    ctx.mock.send({ type: 'token', event_id: eventId, agent_id: e.agent_id, token: text }, f.connection);
    ctx.mock.send(
      { type: 'reply', event_id: eventId, agent_id: e.agent_id, thread_id: e.thread_id, reply: `You said: ${text}`, payload: e.payload, metadata: { tokens_used: 2, model: 'mock', latency_ms: 1, session_key: sessionKey } },
      f.connection,
    );
  });
}

const appHandshake: ClientScenario = {
  id: 'app-handshake',
  role: 'app',
  title: 'An app authenticates on /ws/app with its token (header or query) and sends a valid frame',
  requirements: ['CLI-002', 'CLI-001'],
  async script(ctx) {
    answerEvents(ctx);
    const connection = await connected(ctx, ['CLI-002']);
    ctx.next();
    await ctx.waitFor(() => ctx.mock.frames.find((f) => f.connection === connection), 10_000, 'the client sent no frame on its connection', ['CLI-002']);
  },
};

const appSendsValidEvent: ClientScenario = {
  id: 'app-sends-valid-event',
  role: 'app',
  title: 'An app sends a valid event and reads its answers: accepted, tokens, reply',
  requirements: ['CLI-002', 'CLI-001', 'CLI-003'],
  async script(ctx) {
    answerEvents(ctx);
    await connected(ctx, ['CLI-002']);
    ctx.next();
    const event = await ctx.waitFor(() => ctx.mock.frames.find((f) => f.frame?.type === 'event'), 15_000, 'the client sent no event', ['CLI-003']);
    ctx.next();
    const e = event.frame as Record<string, any>;
    if (e.agent_id !== APP_EVENT.agent_id || e.thread_id !== APP_EVENT.thread_id || e.payload?.text !== APP_EVENT.payload.text) {
      ctx.fail(`the event is not the one of the client contract ${JSON.stringify(APP_EVENT)}: ${event.text.slice(0, 300)}`, ['CLI-003']);
    }
    await ctx.waitFor(() => (ctx.client.stdout.some((l) => l.includes('You said: hello')) ? true : undefined), 10_000, 'the client did not print the reply "You said: hello"', ['CLI-003']);
  },
};

/** Expected reconnect delays after 1, 2, 3 failed attempts, and the accepted band around each (jitter). */
const BACKOFF_MS = [LIMITS.reconnectBaseDelayMs, LIMITS.reconnectBaseDelayMs * 2, LIMITS.reconnectBaseDelayMs * 4];
const BAND = [0.5, 1.1] as const;

const appReconnectBackoff: ClientScenario = {
  id: 'app-reconnect-backoff',
  role: 'app',
  title: 'An app whose handshakes fail retries after ≈1 s, 2 s, 4 s (exponential backoff with jitter)',
  requirements: ['CLI-004'],
  async script(ctx) {
    answerEvents(ctx);
    ctx.mock.refuseNext = BACKOFF_MS.length;
    const total = BACKOFF_MS.length + 1;
    await ctx.waitFor(() => (ctx.mock.attempts.length >= total ? true : undefined), ctx.connectTimeoutMs + BACKOFF_MS.reduce((a, b) => a + b, 0) * BAND[1], `the client did not make ${total} connection attempts (made ${ctx.mock.attempts.length})`, ['CLI-004']);
    ctx.next();
    const at = ctx.mock.attempts.map((a) => a.at);
    const delays = BACKOFF_MS.map((_, i) => at[i + 1]! - at[i]!);
    const wrong = delays.map((d, i) => ({ d, want: BACKOFF_MS[i]! })).filter(({ d, want }) => d < want * BAND[0] || d > want * BAND[1]);
    if (wrong.length) {
      ctx.fail(`measured reconnect delays ${delays.join(', ')} ms; expected ${BACKOFF_MS.map((b) => `${b * BAND[0]}–${b * BAND[1]}`).join(', ')} ms`, ['CLI-004']);
    }
  },
};

const HEARTBEAT_WINDOW = [LIMITS.heartbeatIntervalMs - 5_000, LIMITS.heartbeatIntervalMs + 5_000] as const;

const appHeartbeat: ClientScenario = {
  id: 'app-heartbeat',
  role: 'app',
  title: 'An app keeps its connection alive with a ping every 30 s (slow: about 35 s)',
  requirements: ['CLI-002', 'CLI-001', 'CLI-005'],
  optIn: true,
  async script(ctx) {
    answerEvents(ctx);
    const connection = await connected(ctx, ['CLI-002']);
    const openedAt = ctx.mock.now();
    ctx.next();
    await ctx.waitFor(
      () => ctx.mock.frames.find((f) => f.connection === connection && f.frame?.type === 'ping' && f.at - openedAt >= HEARTBEAT_WINDOW[0] && f.at - openedAt <= HEARTBEAT_WINDOW[1]),
      HEARTBEAT_WINDOW[1] + 1_000,
      `the client sent no ping between ${HEARTBEAT_WINDOW[0] / 1000} and ${HEARTBEAT_WINDOW[1] / 1000} s after it connected${ctx.mock.isOpen(connection) ? '' : ' (it closed its connection)'}`,
      ['CLI-005'],
    );
  },
};

export const CLIENT_SCENARIOS: ClientScenario[] = [agentStreamsAndReplies, agentAnswersEveryEvent, agentHandlesInvalidEventId, appHandshake, appSendsValidEvent, appReconnectBackoff, appHeartbeat];
