// Scenarios of the connection, for apps and agents alike: reconnect backoff, coming back after the bridge closes
// or drops the connection, not hammering a bridge that refuses the token, and ignoring what a later protocol
// version may add.
import { CLOSE_CODES, ENDPOINT_PATHS, LIMITS, type ClientKind } from '../../../generated/index.js';
import {
  answered,
  answerEvents,
  BAND,
  connected,
  judgeBackoff,
  printedReply,
  reconnected,
  sendEvent,
} from '../checks.js';
import { SCHEDULING_SLACK_MS, type ClientContext } from '../context.js';
import type { ClientScenario } from '../run.js';

const handshake = (role: ClientKind) => (role === 'app' ? 'CLI-002' : 'CLI-009');
/** The mock plays a bridge for the app's event, so the app's contract (send, print) goes on as usual. */
const serveApp = (ctx: ClientContext) => ctx.scenario.role === 'app' && answerEvents(ctx);

function reconnectBackoff(role: ClientKind): ClientScenario {
  return {
    id: `${role}-reconnect-backoff`,
    role,
    title: `An ${role} whose handshakes fail retries after ≈1 s, 2 s, 4 s (exponential backoff, ±25 % for jitter)`,
    requirements: [handshake(role), 'CLI-004'],
    async script(ctx) {
      serveApp(ctx);
      await judgeBackoff(ctx, 3, { growth: ['CLI-004'] });
      ctx.next();
      await connected(ctx, [handshake(role)]);
    },
  };
}

/** A client must be back this soon after each close: the first delays of its backoff, doubling, and slack. */
const BACK_WITHIN_MS = 10_000;

function reconnectsAfterClose(role: ClientKind): ClientScenario {
  return {
    id: `${role}-reconnects-after-close`,
    role,
    title: `An ${role} comes back after the bridge closes its connection (1001 going away, 4500 internal error) or drops it${role === 'agent' ? ', and answers events on the new connection' : ''}`,
    requirements: [handshake(role), 'CLI-011', ...(role === 'agent' ? ['CLI-014'] : [])],
    async script(ctx) {
      serveApp(ctx);
      let connection = await connected(ctx, [handshake(role)]);
      await ctx.pause(500);
      ctx.next();
      let since = ctx.mock.now();
      ctx.mock.closeConnection(CLOSE_CODES.GOING_AWAY, 'SHUTTING_DOWN', connection);
      connection = await reconnected(
        ctx,
        since,
        BACK_WITHIN_MS,
        'the bridge closed its connection with 1001 (going away)',
        ['CLI-011'],
      );
      await ctx.pause(500);
      ctx.next();
      since = ctx.mock.now();
      ctx.mock.send(
        { type: 'error', code: 'INTERNAL_ERROR', error: 'The mock bridge failed; reconnect and retry.' },
        connection,
      );
      ctx.mock.closeConnection(CLOSE_CODES.INTERNAL_ERROR, 'INTERNAL_ERROR', connection);
      connection = await reconnected(
        ctx,
        since,
        BACK_WITHIN_MS,
        'the bridge closed its connection with 4500 INTERNAL_ERROR',
        ['CLI-011'],
      );
      await ctx.pause(500);
      ctx.next();
      since = ctx.mock.now();
      ctx.mock.dropConnection(connection);
      await reconnected(ctx, since, BACK_WITHIN_MS, 'its TCP connection dropped without a close frame', ['CLI-011']);
      if (role !== 'agent') return;
      ctx.next();
      const from = ctx.mock.frames.length;
      const eventId = sendEvent(ctx, 'an event on the new connection');
      await answered(ctx, eventId, from, { requirements: ['CLI-014'] });
    },
  };
}

/**
 * A client refused for its token is watched this long (on the scaled clock); a backoff client makes at most 4
 * attempts in it (0, 1, 3, 7 s).
 */
const REFUSED_WATCH_MS = 10_000;
const REFUSED_MAX_ATTEMPTS = 5;

function refusedForGood(role: ClientKind): ClientScenario {
  return {
    id: `${role}-refused-for-good`,
    role,
    title: `An ${role} whose token is refused (UNAUTHORIZED, then TOKEN_REVOKED) gives up or backs off; it does not hammer the bridge`,
    requirements: ['CLI-012'],
    async script(ctx) {
      ctx.mock.refuseToken = true;
      await ctx.waitFor(
        () => ctx.mock.attempts[0],
        ctx.connectTimeoutMs,
        'the client made no connection attempt',
        ['CLI-012'],
        false,
      );
      ctx.next();
      const watch = ctx.scaled(REFUSED_WATCH_MS);
      await ctx.pause(watch);
      const attempts = ctx.mock.attempts.length;
      if (attempts > REFUSED_MAX_ATTEMPTS)
        ctx.fail(
          `the client made ${attempts} handshakes in ${watch / 1000} s although its token was refused (a backoff from ${ctx.scaled(LIMITS.reconnectBaseDelayMs)} ms makes at most 4)`,
          ['CLI-012'],
        );
      ctx.held(['CLI-012']);
    },
  };
}

function ignoresUnknown(role: ClientKind): ClientScenario {
  return {
    id: `${role}-ignores-unknown`,
    role,
    title: `An ${role} ignores a message type and fields it does not know (a later protocol version's) and goes on`,
    requirements: [handshake(role), 'CLI-015'],
    async script(ctx) {
      if (role === 'app')
        answerEvents(ctx, {
          extra: { accepted: { queue_position: 1 }, token: { index: 0 }, reply: { trace_id: 'trace-1' } },
        });
      const connection = await connected(ctx, [handshake(role)]);
      ctx.next();
      ctx.mock.send({ type: 'notice', text: 'A message type of a later protocol version.' }, connection);
      if (role === 'app') {
        await printedReply(ctx, ['CLI-015']);
      } else {
        const from = ctx.mock.frames.length;
        const eventId = sendEvent(ctx, 'an event with a field of a later version', 'conformance', { priority: 'high' });
        await answered(ctx, eventId, from, { requirements: ['CLI-015'] });
      }
      await ctx.pause(300);
      if (!ctx.mock.isOpen(connection))
        ctx.fail('the client closed its connection after a message it did not know', ['CLI-015']);
      ctx.held(['CLI-015']);
    },
  };
}

// ---- slow: the heartbeat period and the backoff's cap (minutes on real time, seconds on a scaled clock) ----------

/**
 * The client's first ping from 25 s after the connection opened (scaled) must come by 35 s: the heartbeat period
 * ±5 s. It is the first timing of its scenario, so it also tells whether the client honours the time scale.
 */
async function pingInWindow(ctx: ClientContext, connection: number, requirements: string[]) {
  const openedAt = ctx.mock.openedAt.get(connection) ?? ctx.mock.now();
  const tolerance = 5_000 / LIMITS.heartbeatIntervalMs;
  const [lo, hi] = ctx.band(LIMITS.heartbeatIntervalMs, tolerance);
  const ping = await ctx.waitFor(
    // Pings before the window are allowed (a client may ping at once to see the bridge answer).
    () => ctx.mock.frames.find((f) => f.connection === connection && f.frame?.type === 'ping' && f.at - openedAt >= lo),
    ctx.firstTimeout(hi + 1_000, LIMITS.heartbeatIntervalMs * (1 + tolerance) + 1_000),
    `the client sent no ping between ${+(lo / 1000).toFixed(2)} and ${+(hi / 1000).toFixed(2)} s after it connected${ctx.mock.isOpen(connection) ? '' : ' (it closed its connection)'}`,
    requirements,
    false,
  );
  const after = ping.at - openedAt;
  ctx.checkScale(after, LIMITS.heartbeatIntervalMs, 'its first ping');
  if (after < lo || after > hi)
    ctx.fail(
      `the client sent its first ping ${(after / 1000).toFixed(2)} s after it connected, not between ${(lo / 1000).toFixed(2)} and ${(hi / 1000).toFixed(2)} s`,
      requirements,
    );
  ctx.held(requirements);
  return ping;
}

function heartbeat(role: ClientKind): ClientScenario {
  return {
    id: `${role}-heartbeat`,
    role,
    title: `An ${role} pings every 30 s on a quiet connection, and after a connection whose ping was answered its backoff starts again at 1 s (slow: about 45 s on real time)`,
    requirements: [handshake(role), 'CLI-005', 'CLI-011', 'CLI-013'],
    slow: true,
    async script(ctx) {
      serveApp(ctx);
      ctx.mock.refuseNext = 3; // the backoff grows to 4 s before the connection that resets it
      const connection = await ctx.waitFor(
        () => ctx.mock.connection,
        ctx.connectTimeoutMs + 10_000,
        'the client did not connect after three refused handshakes',
        [handshake(role)],
      );
      ctx.next();
      await pingInWindow(ctx, connection, ['CLI-005']);
      await ctx.pause(500); // the pong has reached it
      ctx.next();
      const closedAt = ctx.mock.now();
      ctx.mock.closeConnection(CLOSE_CODES.GOING_AWAY, 'SHUTTING_DOWN', connection);
      const base = LIMITS.reconnectBaseDelayMs;
      const [, hi] = ctx.band(base, BAND[1] - 1);
      const next = await ctx.waitFor(
        () => ctx.mock.attempts.find((a) => a.at > closedAt),
        ctx.band(8 * base, BAND[1] - 1)[1],
        'the client did not connect again after the bridge closed its connection',
        ['CLI-011', 'CLI-013'],
        false,
      );
      ctx.held(['CLI-011']);
      const delay = next.at - closedAt;
      if (delay > hi)
        ctx.fail(
          `the client came back ${delay} ms after a connection whose ping was answered; its backoff should start again at ${ctx.scaled(base)} ms (at most ${Math.round(hi)} ms)`,
          ['CLI-013'],
        );
      ctx.held(['CLI-013']);
    },
  };
}

function deadConnection(role: ClientKind): ClientScenario {
  return {
    id: `${role}-dead-connection`,
    role,
    title: `An ${role} that gets no pong within 5 s treats the connection as dead and reconnects (slow: about 37 s on real time)`,
    requirements: [handshake(role), 'CLI-005', 'CLI-010'],
    slow: true,
    async script(ctx) {
      serveApp(ctx);
      const connection = await connected(ctx, [handshake(role)]);
      ctx.mock.silent.add(connection);
      ctx.next();
      const ping = await pingInWindow(ctx, connection, ['CLI-005']);
      ctx.next();
      // The pong timeout and the first backoff delay (its upper band), then 1 s (scaled, at least the slack) more.
      const limit =
        ctx.scaled(LIMITS.heartbeatTimeoutMs + LIMITS.reconnectBaseDelayMs * BAND[1]) +
        Math.max(ctx.scaled(1_000), ctx.settings.timeScale > 1 ? SCHEDULING_SLACK_MS : 0);
      const next = await ctx.waitFor(
        () => ctx.mock.attempts.find((a) => a.at > ping.at),
        limit,
        `the client did not reconnect after its ping got no pong (expected within ${ctx.scaled(LIMITS.heartbeatTimeoutMs) / 1000} s of the ping, plus its first backoff delay)`,
        ['CLI-010'],
      );
      if (ctx.mock.isOpen(connection))
        ctx.mock.note(
          `the client reconnected ${next.at - ping.at} ms after the ping without closing the dead connection`,
        );
    },
  };
}

function backoffCap(role: ClientKind): ClientScenario {
  return {
    id: `${role}-backoff-cap`,
    role,
    title: `An ${role} whose handshakes keep failing backs off 1, 2, 4 … 32 s, then no longer than 60 s (slow: about 3 min on real time)`,
    requirements: [handshake(role), 'CLI-004', 'CLI-022'],
    slow: true,
    async script(ctx) {
      serveApp(ctx);
      // 1 + 2 + … + 32 s, then two delays at the cap: an uncapped client's 128 s is caught at 75 s.
      await judgeBackoff(ctx, 8, { growth: ['CLI-004'], cap: ['CLI-022'] });
      ctx.next();
      await connected(ctx, [handshake(role)]);
    },
  };
}

const ROLES = Object.keys(ENDPOINT_PATHS) as ClientKind[];

export const CONNECTION_SCENARIOS = ROLES.flatMap((role) => [
  reconnectBackoff(role),
  reconnectsAfterClose(role),
  refusedForGood(role),
  ignoresUnknown(role),
]);
export const SLOW_SCENARIOS = ROLES.flatMap((role) => [heartbeat(role), deadConnection(role), backoffCap(role)]);
