// The event log's writer: rows queued by the core and committed in groups (write-behind). Started before the
// bridge and stopped after it, so that the events its shutdown ends are logged before the last commit.
import type { Knex } from 'knex';
import type { Config } from '../config.js';
import type { ControlHandlers } from '../cluster/control-handlers.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { WriteBehind } from '../store/write-behind.js';
import type { Peers } from './peers.js';
import type { Service } from './services.js';

export function eventLog(
  db: Knex,
  config: Config,
  deps: { clock: Clock; log: Logger; retryMs: { first: number; max: number } | undefined },
): Service<WriteBehind> {
  return {
    name: 'event log',
    start: () =>
      new WriteBehind(db, deps.log, {
        flushMs: config.eventLogFlushMs,
        maxRows: config.eventLogQueueMaxRows,
        commitMaxRows: config.eventLogCommitMaxRows,
        clock: deps.clock,
        retryMs: deps.retryMs,
      }),
    stop: (writer) => writer.close(),
  };
}

/** Another node lists the event log: it reads what this node has queued too. */
export function eventLogHandlers(writer: WriteBehind): Pick<ControlHandlers, 'flush-event-log'> {
  return { 'flush-event-log': () => writer.flush() };
}

/** Commits what every node has queued, so that a listing reads its writes. */
export function flushEveryNode(writer: WriteBehind, peers: Peers): () => Promise<void> {
  return async () => {
    await Promise.all([writer.flush(), peers.ask({ op: 'flush-event-log' })]);
  };
}
