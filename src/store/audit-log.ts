// The audit trail's rows (D10): written one at a time as admin changes happen, read newest first, and deleted
// past their retention.
import type { Knex } from 'knex';
import type { AuditAction, AuditActorKind } from '../../generated/index.js';

export interface AuditRow {
  audit_id: number;
  at: number;
  actor_kind: AuditActorKind;
  actor_session: string | null;
  action: AuditAction;
  target: string | null;
  /** JSON text. */
  detail: string;
}

export class AuditStore {
  constructor(private readonly db: Knex) {}

  async insert(row: Omit<AuditRow, 'audit_id'>): Promise<void> {
    await this.db('admin_audit').insert(row);
  }

  /** At most `limit + 1` rows older than `before`, newest first: the extra one says whether another page follows. */
  async newest(q: { before?: number | undefined; limit: number }): Promise<AuditRow[]> {
    const query = this.db<AuditRow>('admin_audit')
      .orderBy('audit_id', 'desc')
      .limit(q.limit + 1);
    if (q.before !== undefined) query.where('audit_id', '<', q.before);
    return query;
  }

  /** Deletes the rows written before `cutoff`; returns how many. */
  deleteBefore(cutoff: number): Promise<number> {
    return this.db('admin_audit').where('at', '<', cutoff).delete();
  }
}
