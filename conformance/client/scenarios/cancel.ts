// The cancel extension's scenarios of the client role (S1, S2, S4, S9; CLC-…), run only with --profile cancel and
// judged only of a client that opted in: an agent whose handshake had `?cancel=1` gets `cancel` while it streams; an
// app that cancels its event gets CANCELLED. A client that did not opt in is never sent `cancel` and never asked to
// send one: its scenario is skipped, not applicable (the extension is opt-in; S1).
import { APP_EVENT, forEvent, sendEvent } from '../checks.js';
import { ClientFailure, HarnessBreach, NotApplicable, type ClientContext } from '../context.js';
import type { ReceivedFrame } from '../mock-bridge.js';
import { MOCK_APP_ID, type ClientScenario } from '../run.js';

/** The harness contract: in agent-cancel the agent streams its answer to an event over at least this long. */
export const CANCEL_STREAM_MS = 5_000;
/** An agent sending a frame for the cancelled event later than this after the cancel has not stopped (CLC-002). */
export const STOP_WITHIN_MS = 2_000;
/** How long after the cancel the agent is watched: its connection, its frames for the cancelled event. */
const CANCEL_WATCH_MS = 3_000;
/**
 * How long the mock lets the answer stream before it cancels, as a user would read a little first: an agent that
 * sends its whole answer in one burst has ended the event by then, which the harness contract rules out.
 */
const CANCEL_AFTER_MS = 1_000;
/** How long the app has to cancel its event after its first token, before the scenario is taken as not applicable. */
const APP_CANCEL_WAIT_MS = 10_000;
/** How long after CANCELLED the app is watched: connected, not sending the event again nor cancelling it again. */
const AFTER_CANCELLED_MS = 2_500;

const isEnd = (f: ReceivedFrame) => f.frame?.type === 'reply' || f.frame?.type === 'error';

/**
 * The client's connection, a precondition: not having one fails `requirements`, having one checks nothing yet (a
 * client that does not opt in is then skipped, one that exits is the harness's).
 */
function connection(ctx: ClientContext, requirements: string[]): Promise<number> {
  return ctx.waitFor(
    () => ctx.mock.connection,
    ctx.connectTimeoutMs,
    `the client did not open an authenticated connection to ${ctx.mock.url}/ws/${ctx.scenario.role}`,
    requirements,
    false,
  );
}

/** Waits for the event's reply or error (the hard limit is the answer timeout; how slow is not judged here). */
function answerTo(ctx: ClientContext, eventId: string, from: number, requirements: string[]): Promise<ReceivedFrame> {
  return ctx.waitFor(
    () => ctx.framesSince(from).filter(forEvent(eventId)).find(isEnd),
    ctx.settings.answerTimeoutMs,
    `silent: no reply or error for event ${eventId}`,
    requirements,
  );
}

export const agentCancel: ClientScenario = {
  id: 'agent-cancel',
  role: 'agent',
  title:
    'An agent that opted in (?cancel=1) and is told cancel while it streams keeps its connection, answers the next event, and stops sending frames for the cancelled one',
  requirements: ['CLC-001', 'CLC-002'],
  profiles: ['cancel'],
  async script(ctx) {
    const agent = await connection(ctx, ['CLC-001']);
    if (!ctx.mock.cancelOptIn.has(agent))
      throw new NotApplicable(
        'the agent did not opt in to the cancel extension (no ?cancel=1 on its handshake, S1): it is sent no cancel, and the extension asks nothing of it',
      );
    ctx.next();
    const from = ctx.mock.frames.length;
    const cancelled = sendEvent(ctx, 'please stream a long answer: this event will be cancelled');
    const first = await ctx.waitFor(
      () => ctx.framesSince(from).find(forEvent(cancelled)),
      ctx.settings.answerTimeoutMs,
      `silent: nothing for event ${cancelled}`,
      ['CLC-001'],
      false,
    );
    await ctx.pause(CANCEL_AFTER_MS);
    const ended = isEnd(first) ? first : ctx.framesSince(from).find((f) => forEvent(cancelled)(f) && isEnd(f));
    if (ended)
      throw new HarnessBreach(
        `the agent ended event ${cancelled} (${ended.frame?.type}) ${ended.at - first.at} ms after its first frame, leaving nothing to cancel: in agent-cancel the harness contract asks it to stream for at least ${CANCEL_STREAM_MS / 1000} s`,
      );
    ctx.next();
    ctx.mock.send({ type: 'cancel', event_id: cancelled }, agent);
    const cancelledAt = ctx.mock.now();
    try {
      await ctx.pause(CANCEL_WATCH_MS);
    } catch (err) {
      if (!(err instanceof HarnessBreach)) throw err;
      // The cancel is what it exited on: the agent's failure, not the harness's. It can send nothing more.
      ctx.held(['CLC-002']);
      ctx.fail(
        `the agent exited (${ctx.client.describeExit()}) ${ctx.mock.now() - cancelledAt} ms after cancel for event ${cancelled}: a cancel ends one event, it must not break the agent`,
        ['CLC-001'],
      );
    }
    const late = () =>
      ctx
        .framesSince(from)
        .filter((f) => forEvent(cancelled)(f) && f.connection === agent && f.at > cancelledAt + STOP_WITHIN_MS);
    if (!late().length) ctx.held(['CLC-002']);
    if (!ctx.mock.isOpen(agent)) {
      const closed = ctx.mock.disconnects.find((d) => d.connection === agent);
      ctx.fail(
        `the agent closed its connection (${closed ? `${closed.code} ${closed.reason}`.trim() : 'closed'}) ${closed ? closed.at - cancelledAt : '?'} ms after cancel for event ${cancelled}: a cancel ends one event, never the connection`,
        ['CLC-001'],
      );
    }
    ctx.next();
    const next = ctx.mock.frames.length;
    const second = sendEvent(ctx, 'and this one must still be answered', 'conformance-2');
    await answerTo(ctx, second, next, ['CLC-001']);
    ctx.next();
    // Judged last, over everything the agent sent since the cancel: a SHOULD that fails blocks nothing.
    const sentLate = late();
    if (sentLate.length)
      ctx.fail(
        `the agent sent ${sentLate.length} frame(s) (${[...new Set(sentLate.map((f) => f.frame?.type))].join(', ')}) for event ${cancelled} later than ${STOP_WITHIN_MS / 1000} s after its cancel, the last ${sentLate.at(-1)!.at - cancelledAt} ms after: it should stop sending for a cancelled event`,
        ['CLC-002'],
      );
  },
};

/** The event of the app's contract, again: the same agent, thread and text. */
const isContractEvent = (f: ReceivedFrame) => {
  const e = f.frame as { type?: unknown; agent_id?: unknown; thread_id?: unknown; payload?: { text?: unknown } };
  return (
    e?.type === 'event' &&
    e.agent_id === APP_EVENT.agent_id &&
    e.thread_id === APP_EVENT.thread_id &&
    e.payload?.text === APP_EVENT.payload.text
  );
};

export const appCancels: ClientScenario = {
  id: 'app-cancels',
  role: 'app',
  title:
    'An app that cancels its event names its own event in flight, and takes CANCELLED as the event’s end: no resend, no second cancel, its connection kept',
  requirements: ['CLC-003', 'CLC-004'],
  profiles: ['cancel'],
  async script(ctx) {
    // The contract's event is accepted and gets one token; then the mock holds it, waiting for the app's cancel.
    let held: { eventId: string; connection: number; at: number } | undefined;
    ctx.mock.on('frame', (f) => {
      if (f.invalid || f.frame?.type !== 'event' || held) return;
      const e = f.frame as { agent_id: string; thread_id: string };
      const eventId = `evt${Date.now().toString(36)}c`;
      const sessionKey = `svc:${e.agent_id}:${MOCK_APP_ID}:${e.thread_id}`;
      ctx.mock.send(
        { type: 'accepted', event_id: eventId, agent_id: e.agent_id, session_key: sessionKey, status: 'accepted' },
        f.connection,
      );
      ctx.mock.send({ type: 'token', event_id: eventId, agent_id: e.agent_id, token: 'You said: ' }, f.connection);
      held = { eventId, connection: f.connection, at: ctx.mock.now() };
    });
    await connection(ctx, ['CLC-003']);
    const event = await ctx.waitFor(() => held, 15_000, 'the client sent no event', ['CLC-003'], false);
    ctx.next();
    const since = ctx.mock.frames.length;
    const cancel = await ctx
      .waitFor(
        () => ctx.framesSince(since).find((f) => f.frame?.type === 'cancel'),
        APP_CANCEL_WAIT_MS,
        'no cancel',
        ['CLC-003'],
        false,
      )
      .catch((err: unknown) => {
        if (err instanceof ClientFailure && err.requirements.includes('CLC-003'))
          throw new NotApplicable(
            `the app sent no cancel within ${APP_CANCEL_WAIT_MS / 1000} s of its event's first token: sending cancel is the opt-in (S1), and the extension asks nothing of an app that does not`,
          );
        throw err;
      });
    const named = cancel.frame?.event_id;
    if (named !== event.eventId || cancel.connection !== event.connection)
      ctx.fail(
        `the app's cancel names ${JSON.stringify(named)} on connection ${cancel.connection}; its event in flight is ${event.eventId} on connection ${event.connection}`,
        ['CLC-003'],
      );
    ctx.held(['CLC-003']);
    ctx.next();
    ctx.mock.send(
      {
        type: 'error',
        code: 'CANCELLED',
        error: `Event ${event.eventId} was cancelled by the app.`,
        event_id: event.eventId,
        agent_id: APP_EVENT.agent_id,
      },
      event.connection,
    );
    const cancelledAt = ctx.mock.now();
    const after = ctx.mock.frames.length;
    // An app that exits here breaks the harness contract (the pause ends the scenario): it is not judged.
    await ctx.pause(AFTER_CANCELLED_MS);
    if (!ctx.mock.isOpen(event.connection))
      ctx.fail(
        `the app closed its connection after CANCELLED for the event it cancelled: an event's end is not the connection's`,
        ['CLC-004'],
      );
    const again = ctx.framesSince(after).filter(isContractEvent);
    if (again.length)
      ctx.fail(
        `the app sent its event again ${again[0]!.at - cancelledAt} ms after CANCELLED: a cancelled event has ended`,
        ['CLC-004'],
      );
    const recancelled = ctx.framesSince(after).filter((f) => f.frame?.type === 'cancel');
    if (recancelled.length)
      ctx.fail(
        `the app cancelled again (${recancelled.map((f) => String(f.frame?.event_id)).join(', ')}) after CANCELLED: the event had ended`,
        ['CLC-004'],
      );
    ctx.held(['CLC-004']);
  },
};

export const CANCEL_SCENARIOS = [agentCancel, appCancels];
