// The live sessions (L17): read from the database at start, kept in the session table, written back through the
// event log's writer; dropped with their agent or app, and listed from every node.
import type { Config } from '../config.js';
import type { ControlHandlers } from '../cluster/control-handlers.js';
import { mergeSessions, SessionTable, type SessionRecord } from '../core/sessions.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import type { EventLogReader } from '../store/event-log.js';
import type { WriteBehind } from '../store/write-behind.js';
import type { Peers } from './peers.js';
import type { Service } from './services.js';

export function sessionTable(
  reader: EventLogReader,
  writer: WriteBehind,
  config: Config,
  deps: { clock: Clock; log: Logger },
): Service<SessionTable> {
  return {
    name: 'sessions',
    async start() {
      const { clock, log } = deps;
      const sessions = new SessionTable(config.maxSessionsPerApp, config.maxSessions);
      await reader.deleteExpiredSessions(clock.now()); // those that expired while the bridge was stopped
      const overBound = sessions.load(await reader.liveSessions(clock.now()));
      if (overBound.length) {
        // MAX_SESSIONS_PER_APP was lowered since they were stored (L17).
        log.info(
          { evicted: overBound.length, maxPerApp: config.maxSessionsPerApp, max: config.maxSessions },
          'sessions evicted at start: over the per-app or the node bound',
        );
        writer.deleteSessions(overBound.map((s) => s.session_key));
      }
      return sessions;
    },
  };
}

/** Drops the sessions of these agents and apps (deleted, or their organization deleted). */
export function dropSessions(sessions: SessionTable, writer: WriteBehind, ownerIds: ReadonlySet<string>): void {
  const gone = sessions.remove((s) => ownerIds.has(s.agent_id) || ownerIds.has(s.app_id));
  if (gone.length) writer.deleteSessions(gone.map((s) => s.session_key)); // queued after any pending upsert of them
}

export function sessionHandlers(
  sessions: SessionTable,
  writer: WriteBehind,
): Pick<ControlHandlers, 'sessions' | 'drop-sessions'> {
  return {
    sessions: (change) => sessions.list(change.now, change.filter),
    'drop-sessions': (change) => dropSessions(sessions, writer, new Set(change.ids)),
  };
}

/** The live sessions matching `filter` on every node, sorted by key (O14). */
export function everyNodesSessions(
  sessions: SessionTable,
  peers: Peers,
): (now: number, filter: { agent_id?: string; app_id?: string }) => Promise<SessionRecord[]> {
  return async (now, filter) =>
    mergeSessions([sessions.list(now, filter), ...(await peers.ask({ op: 'sessions', now, filter }))]);
}
