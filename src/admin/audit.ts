// The audit trail of admin changes (D10): who did what to which id, written before the API answers. The change
// itself is made first, so a row that cannot be written fails the answer (500) with the change in place, and the
// log says so.
import type { AuditAction, AuditActor, AuditLog } from '../../generated/index.js';
import { errorText } from '../shared/error-text.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { iso } from '../shared/time.js';
import type { AuditStore } from '../store/audit-log.js';
import { Problem } from './problem.js';

/** What changed: names, fields, counts; never a token, a session id or a payload. */
export type AuditDetail = Record<string, unknown>;

export class AuditTrail {
  constructor(
    private readonly store: AuditStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** Told of every row written (the bridge_admin_actions_total metric). */
    private readonly recorded: (action: AuditAction) => void = () => {},
  ) {}

  async record(actor: AuditActor, action: AuditAction, target: string | null, detail: AuditDetail = {}): Promise<void> {
    try {
      await this.store.insert({
        at: this.clock.now(),
        actor_kind: actor.kind,
        actor_session: actor.session,
        action,
        target,
        detail: JSON.stringify(detail),
      });
    } catch (err) {
      this.log.error(
        { err, action, target, actor },
        'audit trail: the row was not written; the change itself was made',
      );
      throw new Problem('INTERNAL_ERROR', errorText('INTERNAL_ERROR', 'database'));
    }
    this.recorded(action);
  }

  /** Newest first, `limit` entries with an `audit_id` below `before`. */
  async page(q: { before?: number | undefined; limit: number }): Promise<AuditLog> {
    const rows = await this.store.newest(q);
    const entries = rows.slice(0, q.limit).map((r) => ({
      audit_id: r.audit_id,
      at: iso(r.at),
      actor: { kind: r.actor_kind, session: r.actor_session },
      action: r.action,
      target: r.target,
      detail: JSON.parse(r.detail) as AuditDetail,
    }));
    return { entries, next_before: rows.length > q.limit ? entries[entries.length - 1]!.audit_id : null };
  }

  /** Deletes the entries older than `cutoff` (the hourly sweep); returns how many. */
  deleteBefore(cutoff: number): Promise<number> {
    return this.store.deleteBefore(cutoff);
  }
}
