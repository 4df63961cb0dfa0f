// What the client scenarios share: waiting for the client's connection, sending it events, reading its answers,
// answering an app's events like a bridge with an echo agent, and judging reconnect delays.
import { LIMITS, validateEventToAgentMessage } from '../../generated/index.js';
import type { ClientContext } from './context.js';
import type { ReceivedFrame } from './mock-bridge.js';
import { MOCK_APP_ID } from './run.js';

/** How long the app has to print the reply the mock sent at once. */
const PRINT_MS = 10_000;
/** How long after its reply or error an agent's further frames for the event are watched for. */
const AFTER_END_MS = 500;
/** The event of the app's contract (conformance/README.md, "Client role"). */
export const APP_EVENT = { agent_id: 'echo-agent', thread_id: 'conformance', payload: { text: 'hello' } };
/**
 * Reconnect delays are judged within ±25 % of the protocol's (1 s, 2 s, 4 s … capped at 60 s): jitter either way
 * passes, a client that retries at once or does not double fails. The protocol names no jitter; 25 % covers the
 * usual ±20 % and a busy machine's timers.
 */
export const BAND = [0.75, 1.25] as const;

/** The protocol's delay before reconnect attempt `n` (1-based). */
export const protocolDelay = (n: number) =>
  Math.min(LIMITS.reconnectMaxDelayMs, LIMITS.reconnectBaseDelayMs * 2 ** (n - 1));

export async function connected(ctx: ClientContext, requirements: string[]): Promise<number> {
  return ctx.waitFor(
    () => ctx.mock.connection,
    ctx.connectTimeoutMs,
    `the client did not open an authenticated connection to ${ctx.mock.url}/ws/${ctx.scenario.role} (attempts: ${ctx.mock.attempts.map((a) => a.outcome).join(', ') || 'none'})`,
    requirements,
  );
}

/** A connection opened after `since` (ms on the mock's clock), within `timeoutMs`: a spare one opened before does not count. */
export async function reconnected(
  ctx: ClientContext,
  since: number,
  timeoutMs: number,
  why: string,
  requirements: string[],
): Promise<number> {
  return ctx.waitFor(
    () => {
      const c = ctx.mock.connection;
      return c !== undefined && ctx.mock.openedAt.get(c)! >= since ? c : undefined;
    },
    timeoutMs,
    `the client did not connect again after ${why}`,
    requirements,
  );
}

let eventCounter = 0;
export function sendEvent(
  ctx: ClientContext,
  text: string,
  thread = 'conformance',
  extra: Record<string, unknown> = {},
): string {
  const eventId = `evt${Date.now().toString(36)}${(++eventCounter).toString(36)}`;
  const frame: Record<string, unknown> = {
    type: 'event',
    event_id: eventId,
    app_id: MOCK_APP_ID,
    thread_id: thread,
    session_key: `svc:${MOCK_APP_ID}:${thread}`,
    payload: { text },
  };
  if (!validateEventToAgentMessage(frame))
    throw new Error(`the mock built an invalid event: ${JSON.stringify(validateEventToAgentMessage.errors)}`);
  ctx.mock.send({ ...frame, ...extra });
  return eventId;
}

export const forEvent = (eventId: string) => (f: ReceivedFrame) => f.frame?.event_id === eventId;
const isEnd = (f: ReceivedFrame) => f.frame?.type === 'reply' || f.frame?.type === 'error';

/**
 * Waits for an agent's answer to an event (`find`: a reply or error, or its first frame), judged against the answer
 * window: within it, on time; after it but before the hard limit, slow (a warning of CLI-007, naming the time);
 * nothing by the hard limit, silent (a failure of `requirements`: silence leaves the app waiting).
 */
export async function answerOf<T>(
  ctx: ClientContext,
  eventId: string,
  find: () => T | undefined,
  what: string,
  requirements: string[],
): Promise<T> {
  const { answerWindowMs, answerTimeoutMs } = ctx.settings;
  const sent = ctx.mock.now();
  const found = await ctx.waitFor(find, answerTimeoutMs, `silent: ${what} for event ${eventId}`, requirements);
  const took = ctx.mock.now() - sent;
  if (took > answerWindowMs)
    ctx.warn(
      'CLI-007',
      `slow: the agent answered event ${eventId} after ${(took / 1000).toFixed(1)} s, beyond the answer window of ${answerWindowMs / 1000} s`,
    );
  return found;
}

/** Waits for the event's reply or error; checks its tokens come before it and (optionally) fit the limit. */
export async function answered(
  ctx: ClientContext,
  eventId: string,
  from: number,
  o: { checkFragments?: string[]; requirements: string[] },
): Promise<ReceivedFrame> {
  const fragments = o.checkFragments;
  const end = await answerOf(
    ctx,
    eventId,
    () => {
      const mine = ctx.framesSince(from).filter(forEvent(eventId));
      if (fragments) {
        for (const f of mine.filter((m) => m.frame?.type === 'token')) {
          const bytes = Buffer.byteLength(String(f.frame?.token), 'utf8');
          if (bytes > LIMITS.tokenFragmentMaxBytes)
            ctx.fail(
              `a token fragment of event ${eventId} is ${bytes} UTF-8 bytes, over the limit of ${LIMITS.tokenFragmentMaxBytes}`,
              fragments,
            );
        }
      }
      return mine.find(isEnd);
    },
    'no reply or error',
    o.requirements,
  );
  if (fragments) ctx.held(fragments);
  return end;
}

/** After the end, nothing more for the event: no late token, no second reply or error. */
export async function nothingAfter(
  ctx: ClientContext,
  eventId: string,
  end: ReceivedFrame,
  requirements: string[],
): Promise<void> {
  await ctx.pause(AFTER_END_MS);
  const index = ctx.mock.frames.indexOf(end);
  const late = ctx.framesSince(index + 1).filter(forEvent(eventId));
  if (late.length)
    ctx.fail(
      `after its ${end.frame?.type} for event ${eventId} the client sent ${late.map((f) => f.frame?.type).join(', ')} for it: a reply or error must come once, after all tokens`,
      requirements,
    );
  ctx.held(requirements);
}

export interface AppAnswers {
  /** Extra fields the mock adds to its answers (a later protocol version's), by message type. */
  extra?: Partial<Record<'accepted' | 'token' | 'reply', Record<string, unknown>>>;
  /** Answers an event with this instead of accepted, tokens and reply: return the frame, or undefined for the usual. */
  instead?(event: ReceivedFrame, eventId: string): Record<string, unknown> | undefined;
}

/** Answers the app's events like a bridge with an echo agent: accepted, two tokens, the reply. */
export function answerEvents(ctx: ClientContext, o: AppAnswers = {}): void {
  let n = 0;
  ctx.mock.on('frame', (f) => {
    if (f.invalid || f.frame?.type !== 'event') return;
    const e = f.frame as { agent_id: string; thread_id: string; payload: Record<string, unknown> };
    const eventId = `evt${(++n).toString(36)}${Date.now().toString(36)}`;
    const instead = o.instead?.(f, eventId);
    if (instead) return void ctx.mock.send(instead, f.connection);
    const sessionKey = `svc:${e.agent_id}:${MOCK_APP_ID}:${e.thread_id}`;
    const text = typeof e.payload.text === 'string' ? e.payload.text : JSON.stringify(e.payload);
    const x = o.extra ?? {};
    ctx.mock.send(
      {
        type: 'accepted',
        event_id: eventId,
        agent_id: e.agent_id,
        session_key: sessionKey,
        status: 'accepted',
        ...x.accepted,
      },
      f.connection,
    );
    ctx.mock.send(
      { type: 'token', event_id: eventId, agent_id: e.agent_id, token: 'You said: ', ...x.token },
      f.connection,
    );
    ctx.mock.send({ type: 'token', event_id: eventId, agent_id: e.agent_id, token: text, ...x.token }, f.connection);
    ctx.mock.send(
      {
        type: 'reply',
        event_id: eventId,
        agent_id: e.agent_id,
        thread_id: e.thread_id,
        reply: `You said: ${text}`,
        payload: e.payload,
        metadata: { tokens_used: 2, model: 'mock', latency_ms: 1, session_key: sessionKey },
        ...x.reply,
      },
      f.connection,
    );
  });
}

/** Waits until the client has printed the reply of the contract's event. */
export async function printedReply(ctx: ClientContext, requirements: string[]): Promise<void> {
  await ctx.waitFor(
    () => (ctx.client.stdout.some((l) => l.includes('You said: hello')) ? true : undefined),
    PRINT_MS,
    'the client did not print the reply "You said: hello"',
    requirements,
  );
}

/**
 * Lets the first `refusals` handshakes fail (HTTP 503, a bridge that is down), waits for the attempt after them,
 * and judges each delay between attempts against the protocol's backoff on the scaled clock; the first delay also
 * tells whether the client honours the time scale. Returns the delays measured.
 */
export async function judgeBackoff(
  ctx: ClientContext,
  refusals: number,
  requirements: { growth: string[]; cap?: string[] },
): Promise<number[]> {
  ctx.mock.refuseNext = refusals;
  const expected = Array.from({ length: refusals }, (_, i) => protocolDelay(i + 1));
  const bands = expected.map((want) => ctx.band(want, BAND[1] - 1));
  await ctx.waitFor(
    () => ctx.mock.attempts[0],
    ctx.connectTimeoutMs,
    'the client made no connection attempt',
    requirements.growth,
    false,
  );
  const delays: number[] = [];
  for (const [i, want] of expected.entries()) {
    const previous = ctx.mock.attempts[i]!.at;
    const over = requirements.cap && want === LIMITS.reconnectMaxDelayMs ? requirements.cap : requirements.growth;
    const [lo, hi] = bands[i]!;
    const next = await ctx.waitFor(
      () => ctx.mock.attempts[i + 1],
      ctx.firstTimeout(hi + 500, want * BAND[1] + 500),
      `the client did not try again within ${(hi / 1000).toFixed(2)} s of failed attempt ${i + 1} (expected about ${ctx.scaled(want) / 1000} s; delays so far ${delays.join(', ') || 'none'} ms)`,
      over,
      false,
    );
    const delay = next.at - previous;
    delays.push(delay);
    if (i === 0) ctx.checkScale(delay, want, 'its first reconnect delay');
    if (delay < lo || delay > hi) {
      ctx.fail(
        `measured reconnect delays ${delays.join(', ')} ms; expected ${bands
          .slice(0, delays.length)
          .map(([l, h]) => `${Math.round(l)}–${Math.round(h)}`)
          .join(
            ', ',
          )} ms (±25 %${ctx.settings.timeScale > 1 ? ` of the protocol's delays at time scale ${ctx.settings.timeScale}` : ''})`,
        over,
      );
    }
    ctx.held(over);
  }
  return delays;
}
