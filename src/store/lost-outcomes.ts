// Rows a crash left `pending` (O9). A bridge killed without a shutdown never writes the outcome of the events it had
// in flight (nor of those answered within its last commit window), so their rows would stay `pending` forever.
// A row is marked `lost` once it is older than any event can be in flight: that holds whichever process wrote it,
// so it stays right when several bridges share one database (unlike "every row pending when I start").
import type { Clock, Timer } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import type { EventLogReader } from './event-log.js';

/** Beyond the agent timeout and the reconnect grace: the last commit of an outcome, and clocks a little apart. */
export const LOST_MARGIN_MS = 60_000;

/** How old a `pending` row must be to be marked `lost`: no event stays in flight longer. */
export function lostAfterMs(agentTimeoutMs: number, agentReconnectGraceMs: number): number {
  return agentTimeoutMs + agentReconnectGraceMs + LOST_MARGIN_MS;
}

/** Marks `lost` the `pending` rows older than `afterMs`; logs how many (at warn: each is an outcome nobody will know). */
export async function markLostOutcomes(
  reader: EventLogReader,
  clock: Clock,
  afterMs: number,
  log: Logger,
): Promise<number> {
  const rows = await reader.markLost(clock.now() - afterMs);
  if (rows)
    log.warn(
      { rows, older_than_ms: afterMs },
      'event log: rows left pending by a bridge that stopped without a shutdown marked lost (O9)',
    );
  return rows;
}

/**
 * Marks them at start (awaited), once more when the rows pending at start are all old enough (a restart right after
 * a crash resolves that crash's rows then, not an hour later), and returns that timer; the hourly sweep calls
 * `markLostOutcomes` too, for rows other processes leave.
 */
export async function markLostAtStart(
  reader: EventLogReader,
  clock: Clock,
  afterMs: number,
  log: Logger,
): Promise<Timer> {
  await markLostOutcomes(reader, clock, afterMs, log);
  return clock.setTimer(afterMs, () => {
    markLostOutcomes(reader, clock, afterMs, log).catch((err) =>
      log.error({ err }, 'marking lost event outcomes failed'),
    );
  });
}
