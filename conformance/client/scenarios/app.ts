// App-only scenarios: the handshake, the contract's event and its answers, and every error the bridge may send
// about an event (one scenario per code of the catalogue, in the profiles that know the code: its `origin` in the catalogue):
// the app keeps running and its connection, and does not send again at once.
import { ERROR_CODES, ERRORS, type ErrorCode, type ErrorOrigin } from '../../../generated/index.js';
import { answerEvents, APP_EVENT, connected, printedReply } from '../checks.js';
import type { ClientScenario } from '../run.js';
import type { Profile } from '../../scenario.js';

export const appHandshake: ClientScenario = {
  id: 'app-handshake',
  role: 'app',
  title: 'An app authenticates on /ws/app with its token (header or query) and sends a valid frame',
  requirements: ['CLI-002', 'CLI-001'],
  async script(ctx) {
    answerEvents(ctx);
    const connection = await connected(ctx, ['CLI-002']);
    ctx.next();
    await ctx.waitFor(
      () => ctx.mock.frames.find((f) => f.connection === connection),
      10_000,
      'the client sent no frame on its connection',
      ['CLI-002'],
    );
  },
};

export const appSendsValidEvent: ClientScenario = {
  id: 'app-sends-valid-event',
  role: 'app',
  title: 'An app sends a valid event and reads its answers: accepted, tokens, reply',
  requirements: ['CLI-002', 'CLI-001', 'CLI-003'],
  async script(ctx) {
    answerEvents(ctx);
    await connected(ctx, ['CLI-002']);
    ctx.next();
    const event = await ctx.waitFor(
      () => ctx.mock.frames.find((f) => f.frame?.type === 'event'),
      15_000,
      'the client sent no event',
      ['CLI-003'],
      false,
    );
    ctx.next();
    const e = event.frame as Record<string, any>;
    if (
      e.agent_id !== APP_EVENT.agent_id ||
      e.thread_id !== APP_EVENT.thread_id ||
      e.payload?.text !== APP_EVENT.payload.text
    ) {
      ctx.fail(
        `the event is not the one of the client contract ${JSON.stringify(APP_EVENT)}: ${event.text.slice(0, 300)}`,
        ['CLI-003'],
      );
    }
    await printedReply(ctx, ['CLI-003']);
  },
};

/** How long after the error the app is watched: alive, connected, and not sending the event again too soon. */
const WATCH_MS = 2_500;
/** No event again within this long of an error (our reading of "not at once"; the protocol names no delay). */
const NOT_AT_ONCE_MS = 1_000;
const RETRY_AFTER_SECONDS = 2;

/** The error the mock sends in place of `accepted`, as a bridge would. */
function errorFor(code: ErrorCode, eventId: string): Record<string, unknown> {
  return {
    type: 'error',
    code,
    error: `The conformance suite's mock bridge answers this event with ${code}.`,
    event_id: eventId,
    agent_id: APP_EVENT.agent_id,
    ...(code === 'RATE_LIMIT_EXCEEDED' ? { metadata: { retry_after_seconds: RETRY_AFTER_SECONDS } } : {}),
  };
}

/** The profiles whose rules know a code of this origin: an extension's code is sent in none of these. */
const PROFILES_OF: Record<ErrorOrigin, Profile[]> = {
  protocol: ['protocol', 'bridge'],
  decision: ['bridge'],
  extension: [],
};

function appHandlesError(code: ErrorCode, origin: ErrorOrigin): ClientScenario {
  const rateLimited = code === 'RATE_LIMIT_EXCEEDED';
  return {
    id: `app-error-${code.toLowerCase().replace(/_/g, '-')}`,
    role: 'app',
    title: `An app whose event gets ${code} keeps running and its connection, and does not send again at once${rateLimited ? ` (nor before retry_after_seconds)` : ''}`,
    requirements: ['CLI-002', 'CLI-001', 'CLI-003', 'CLI-018', ...(rateLimited ? ['CLI-020'] : []), 'CLI-019'],
    profiles: PROFILES_OF[origin],
    async script(ctx) {
      let errorAt: number | undefined;
      answerEvents(ctx, {
        instead: (_event, eventId) => {
          if (errorAt !== undefined) return undefined; // a later event is answered as usual
          errorAt = ctx.mock.now();
          return errorFor(code, eventId);
        },
      });
      const connection = await connected(ctx, ['CLI-002']);
      ctx.next();
      await ctx.waitFor(() => errorAt, 15_000, 'the client sent no event', ['CLI-003']);
      ctx.next();
      const watch = rateLimited ? Math.max(WATCH_MS, RETRY_AFTER_SECONDS * 1000 + 500) : WATCH_MS;
      // An app that exits here breaks the harness contract (the pause ends the scenario): it is not judged.
      await ctx.pause(watch);
      if (!ctx.mock.isOpen(connection))
        ctx.fail(
          `the app closed its connection after ${code} for its event: an error about an event ends only that event`,
          ['CLI-018'],
        );
      ctx.held(['CLI-018']);
      const again = ctx.mock.frames
        .filter((f) => f.frame?.type === 'event')
        .slice(1)
        .map((f) => f.at - errorAt!);
      if (rateLimited && again.some((d) => d < RETRY_AFTER_SECONDS * 1000)) {
        ctx.fail(
          `the app sent an event again ${Math.min(...again)} ms after RATE_LIMIT_EXCEEDED with retry_after_seconds ${RETRY_AFTER_SECONDS}`,
          ['CLI-020'],
        );
      }
      if (rateLimited) ctx.held(['CLI-020']);
      if (again.some((d) => d < NOT_AT_ONCE_MS))
        ctx.fail(
          `the app sent an event again ${Math.min(...again)} ms after ${code}: not at once (within ${NOT_AT_ONCE_MS} ms)`,
          ['CLI-019'],
        );
      ctx.held(['CLI-019']);
    },
  };
}

/** The codes the catalogue lets the bridge send an app about one of its events. */
export const APP_EVENT_ERRORS = ERROR_CODES.filter(
  (code) => ERRORS[code].receivers.includes('app') && ERRORS[code].scope === 'event',
);

/** One error scenario per code the bridge may send an app about its event, but an extension's (no profile has it). */
export const APP_SCENARIOS = [
  appHandshake,
  appSendsValidEvent,
  ...APP_EVENT_ERRORS.filter((code) => ERRORS[code].origin !== 'extension').map((code) =>
    appHandlesError(code, ERRORS[code].origin),
  ),
];
