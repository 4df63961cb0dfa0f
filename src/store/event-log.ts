// Reading the event log and the sessions back, and deleting what is past its retention.
import type { Knex } from 'knex';
import type { ErrorCode, EventLog, EventLogEntry, EventStatus } from '../../generated/index.js';
import { eventIdFloor } from '../core/ids.js';
import type { SessionRecord } from '../core/sessions.js';
import { iso } from '../shared/time.js';
import type { EventRow } from './write-behind.js';

export interface EventQuery {
  app_id?: string | undefined;
  agent_id?: string | undefined;
  status?: EventStatus | undefined;
  code?: ErrorCode | undefined;
  before?: string | undefined;
  /** The events of the apps this organization has now (a deleted app's rows match none). */
  org_id?: string | undefined;
  /** Received at or after (epoch ms). */
  since?: number | undefined;
  /** Received before (epoch ms). */
  until?: number | undefined;
  limit: number;
}

/** A row read back as the wire shows it (bigint columns are numbers on PostgreSQL too: postgres.ts). */
function entry(r: EventRow): EventLogEntry {
  return {
    event_id: r.event_id,
    app_id: r.app_id,
    agent_id: r.agent_id,
    thread_id: r.thread_id,
    session_key: r.session_key,
    status: r.status,
    outcome: r.outcome,
    code: r.code,
    payload_bytes: r.payload_bytes,
    tokens_used: r.tokens_used,
    received_at: iso(r.received_at),
    completed_at: r.completed_at === null ? null : iso(r.completed_at),
    latency_ms: r.latency_ms,
  };
}

export class EventLogReader {
  constructor(private readonly db: Knex) {}

  async page(q: EventQuery): Promise<EventLog> {
    const query = this.db<EventRow>('events')
      .orderBy('event_id', 'desc')
      .limit(q.limit + 1);
    for (const key of ['app_id', 'agent_id', 'status', 'code'] as const)
      if (q[key] !== undefined) query.where(key, q[key]!);
    if (q.before !== undefined) query.where('event_id', '<', q.before);
    // A subquery, not a list of ids: the statement stays the same size however many apps the organization has.
    if (q.org_id !== undefined) query.whereIn('app_id', this.db('apps').select('app_id').where({ org_id: q.org_id }));
    if (q.since !== undefined) query.where('received_at', '>=', q.since);
    if (q.until !== undefined) query.where('received_at', '<', q.until);
    const rows = await query;
    const page = rows.slice(0, q.limit).map(entry);
    return { events: page, next_before: rows.length > q.limit ? page[page.length - 1]!.event_id : null };
  }

  /**
   * For each agent of the organization with events received after `since`, how many, and how many of them
   * ended with an error (refused, or failed after `accepted`): one grouped query. The event id bound lets each
   * agent's index be read from `since` on only, not over its whole retained log.
   */
  async agentActivity(orgId: string, since: number): Promise<Map<string, { events: number; errors: number }>> {
    const rows: { agent_id: string; events: number | string; errors: number | string | null }[] = await this.db(
      'events',
    )
      .select('agent_id')
      .count({ events: '*' })
      .select(this.db.raw('SUM(CASE WHEN "code" IS NULL THEN 0 ELSE 1 END) AS "errors"'))
      .whereIn('agent_id', this.db('agents').select('agent_id').where('org_id', orgId))
      .where('event_id', '>=', eventIdFloor(since))
      .where('received_at', '>', since)
      .groupBy('agent_id');
    return new Map(rows.map((r) => [r.agent_id, { events: Number(r.events), errors: Number(r.errors ?? 0) }]));
  }

  /** Deletes events received before `cutoff`; returns how many. */
  deleteBefore(cutoff: number): Promise<number> {
    return this.db('events').where('received_at', '<', cutoff).delete();
  }

  /** Marks `lost` the rows still `pending` that were received before `cutoff` (O9); returns how many. */
  markLost(cutoff: number): Promise<number> {
    return this.db('events').where('outcome', 'pending').where('received_at', '<', cutoff).update({ outcome: 'lost' });
  }

  /** Deletes the rows of sessions expired at `now`, including those that expired while the bridge was stopped. */
  deleteExpiredSessions(now: number): Promise<number> {
    return this.db('sessions').where('expires_at', '<=', now).delete();
  }

  async liveSessions(now: number): Promise<SessionRecord[]> {
    return this.db<SessionRecord>('sessions').where('expires_at', '>', now);
  }
}
