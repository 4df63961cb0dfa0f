// The hourly sweeps: expired sessions, event-log and audit-trail rows past their retention, and event rows left
// pending by a crash (O9), all on the bridge's clock so the test clock can run them.
import { LIMITS } from '../../generated/index.js';
import type { AuditTrail } from '../admin/audit.js';
import type { Config } from '../config.js';
import { every, oneAtATime } from '../core/repeat.js';
import type { SessionTable } from '../core/sessions.js';
import { describeStep, SWEEP_CLOCK_STEP_MAX_MS, SweepClock } from '../core/sweep-clock.js';
import type { Metrics } from '../ops/metrics.js';
import type { Clock, Timer } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { DAY_MS } from '../shared/time.js';
import type { EventLogReader } from '../store/event-log.js';
import { lostAfterMs, markLostAtStart, markLostOutcomes } from '../store/lost-outcomes.js';
import type { WriteBehind } from '../store/write-behind.js';
import type { Service } from './services.js';

/** Sessions and event-log retention are swept this often, on the bridge's clock. */
export const SWEEP_INTERVAL_MS = 3_600_000;

export interface SweepDeps {
  config: Config;
  clock: Clock;
  log: Logger;
  reader: EventLogReader;
  writer: WriteBehind;
  sessions: SessionTable;
  audit: AuditTrail;
  metrics: Metrics;
  agentReconnectGraceMs: number | undefined;
}

/** How old a pending row must be to be marked lost: no event stays in flight longer. */
function lostAfter({ config, agentReconnectGraceMs }: SweepDeps): number {
  return lostAfterMs(config.agentTimeoutMs, agentReconnectGraceMs ?? LIMITS.agentReconnectGraceMs);
}

/** Rows a crash left pending are marked lost once no event can still be in flight for them (O9). */
export function lostOutcomes(deps: SweepDeps): Service<Timer> {
  return {
    name: 'lost outcomes',
    start: () => markLostAtStart(deps.reader, deps.clock, lostAfter(deps), deps.log),
    stop: (timer) => timer.cancel(),
  };
}

export function sweeps(deps: SweepDeps): Service<Timer> {
  return {
    name: 'sweeps',
    start() {
      // Every deletion and marking below counts from the wall clock: none on a step it cannot explain (F2).
      const sweepClock = new SweepClock(deps.clock);
      // The database's part one at a time: those falling due while one is deleting (a large table, a slow database)
      // become one more.
      const databaseSweeps = oneAtATime(() => sweepDatabase(deps));
      const hourly = every(deps.clock, SWEEP_INTERVAL_MS, () => {
        if (!trusted(sweepClock, deps)) return;
        const expired = deps.sessions.sweep(deps.clock.now());
        if (expired.length) deps.writer.deleteSessions(expired.map((s) => s.session_key));
        databaseSweeps.request();
      });
      return {
        cancel() {
          databaseSweeps.stop();
          hourly.cancel();
        },
      };
    },
    stop: (timer) => timer.cancel(),
  };
}

function trusted(sweepClock: SweepClock, { metrics, log }: SweepDeps): boolean {
  const verdict = sweepClock.check();
  if (verdict.trusted) return true;
  metrics.sweepRefused();
  log.warn(
    { stepMs: verdict.stepMs, maxStepMs: SWEEP_CLOCK_STEP_MAX_MS },
    `hourly sweep skipped: the wall clock is ${describeStep(verdict.stepMs)} the time that passed since the last sweep; nothing is deleted until it is back within a day of it, or the bridge restarts`,
  );
  return false;
}

function sweepDatabase(deps: SweepDeps): Promise<unknown> {
  const { config, clock, log, reader, audit } = deps;
  const now = clock.now();
  return Promise.all([
    markLostOutcomes(reader, clock, lostAfter(deps), log).catch((err) =>
      log.error({ err }, 'marking lost event outcomes failed'),
    ),
    reader.deleteExpiredSessions(now).catch((err) => log.error({ err }, 'session sweep failed')),
    config.eventLogRetentionDays > 0 &&
      reader.deleteBefore(now - config.eventLogRetentionDays * DAY_MS).then(
        (deleted) => deleted && log.info({ deleted }, 'event log retention sweep'),
        (err) => log.error({ err }, 'event log retention sweep failed'),
      ),
    config.auditLogRetentionDays > 0 &&
      audit.deleteBefore(now - config.auditLogRetentionDays * DAY_MS).then(
        (deleted) => deleted && log.info({ deleted }, 'audit trail retention sweep'),
        (err) => log.error({ err }, 'audit trail retention sweep failed'),
      ),
  ]);
}
