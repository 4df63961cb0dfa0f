// What /readyz answers, on PORT and on METRICS_PORT alike (L21): not while shutting down, cut off from the other
// nodes, without a database that answers or takes the event log's writes, or while connections cannot be accepted.
import type { Knex } from 'knex';
import type { ClusterNode } from '../cluster/node.js';
import type { NotReady } from '../http/routes.js';
import type { AcceptFailures } from '../ops/accept-failures.js';
import { errorText } from '../shared/error-text.js';
import { databaseAnswers } from '../store/database.js';
import type { WriteBehind } from '../store/write-behind.js';

/**
 * /readyz answers 500 once the database has not answered for this long: within the 2 s or more a load balancer's
 * health check waits, whatever the database does (O15).
 */
const READY_DATABASE_MS = 1_500;
/**
 * /readyz answers 500 once the event log's commits have failed for this long, on the bridge's clock (O15): a database
 * that answers `select 1` but takes no writes (a full disk, a read-only file) loses the log a bound's worth at a time.
 */
export const READY_EVENT_LOG_MS = 30_000;

export class Readiness {
  private shuttingDown = false;
  private accepts: AcceptFailures | undefined;

  constructor(private readonly deps: { db: Knex; writer: WriteBehind; cluster: ClusterNode | undefined }) {}

  /** The shutdown has begun: no new traffic. */
  shutDown(): void {
    this.shuttingDown = true;
  }

  /** The server listens: a recent failure to accept makes the bridge not ready. */
  watch(accepts: AcceptFailures): void {
    this.accepts = accepts;
  }

  readonly check = async (): Promise<NotReady | undefined> => {
    const { db, writer, cluster } = this.deps;
    if (this.shuttingDown) return { code: 'SHUTTING_DOWN', why: errorText('SHUTTING_DOWN', 'not_ready') };
    if (cluster && !cluster.bus.isLinked())
      return { code: 'INTERNAL_ERROR', why: errorText('INTERNAL_ERROR', 'cluster_link') };
    await databaseAnswers(db, READY_DATABASE_MS);
    const stuck = writer.failing;
    if (stuck && stuck.forMs >= READY_EVENT_LOG_MS) {
      return {
        code: 'INTERNAL_ERROR',
        why: errorText('INTERNAL_ERROR', 'event_log', {
          seconds: Math.floor(stuck.forMs / 1000),
          reason: stuck.reason.slice(0, 200),
          rows: stuck.waiting,
        }),
      };
    }
    const overloaded = this.accepts?.recent();
    return overloaded ? { code: 'OVERLOADED', why: overloaded } : undefined;
  };
}
