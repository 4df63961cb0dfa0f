// One bridge per PostgreSQL database (O13), unless its nodes share it as one bridge through Redis (REDIS_URL). A
// bridge keeps the registry, sessions and connections in memory: two independent bridges on one database would
// split it (an agent connected to one looks offline to the other, a token revoked on one still works on the other).
//
// The lock is a session-level advisory lock, taken with pg_try_advisory_lock on a connection of its own held for the
// life of the process: PostgreSQL drops it when that session ends however it ends (a clean shutdown, SIGKILL, a
// machine gone: once the server notices the connection is dead), so there is never a stale lock to clear. Advisory
// locks are per database: bridges on other databases of the same server do not see it.
import { hostname } from 'node:os';
import type { Client } from 'pg';
import type { Logger } from '../shared/logger.js';
import type { DatabaseLock } from './database-lock.js';
import { DatabaseInUseError, DatabaseOpenError } from './database-errors.js';
import { shownUrl } from '../shared/shown-url.js';
import { BRIDGE_LOCK_KEY, connect } from './postgres.js';

/** Names this process in pg_stat_activity (its first 63 bytes), so that a refused bridge can say which one holds the lock. */
const holderName = () => `bridge pid ${process.pid} on ${hostname()}`;

/** Who holds the lock, as PostgreSQL shows it to this role; undefined when it does not show it. */
async function holder(client: Client): Promise<string | undefined> {
  const { rows } = await client.query(
    `SELECT a.application_name, a.client_addr, a.backend_start FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 2
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [...BRIDGE_LOCK_KEY],
  );
  const row = rows[0];
  if (!row?.application_name) return undefined;
  const from = row.client_addr ? `, connected from ${row.client_addr}` : '';
  return `${row.application_name}${from} since ${new Date(row.backend_start).toISOString()}`;
}

/** Takes the lock of the database or throws DatabaseInUseError at once (a second bridge is a mistake, not contention). */
export async function lockPostgres(url: string, log: Logger): Promise<DatabaseLock> {
  let client: Client;
  try {
    client = await connect(url, holderName());
  } catch (err) {
    throw new DatabaseOpenError(`cannot open the database ${shownUrl(url)}: ${(err as Error).message}`);
  }
  try {
    const { rows } = await client.query('SELECT pg_try_advisory_lock($1, $2) AS locked', [...BRIDGE_LOCK_KEY]);
    if (!rows[0].locked) {
      const by = await holder(client).catch(() => undefined);
      throw new DatabaseInUseError(
        `another bridge is using the database ${shownUrl(url)}${by ? ` (${by})` : ''}; run one bridge per database, or set REDIS_URL to run several nodes as one bridge`,
      );
    }
  } catch (err) {
    await client.end().catch(() => {});
    if (err instanceof DatabaseInUseError) throw err;
    throw new DatabaseOpenError(`cannot open the database ${shownUrl(url)}: ${(err as Error).message}`);
  }
  let released = false;
  client.once('error', (err) => {
    // The lock went with its session: nothing now keeps a second bridge from starting on this database. Once: a
    // dropped connection reports itself twice (the server's notice, then the socket's end).
    if (!released)
      log.error(
        { err, database: shownUrl(url) },
        'the connection holding the database lock was lost; restart this bridge so that it holds the lock again',
      );
  });
  return {
    async release() {
      released = true;
      await client.query('SELECT pg_advisory_unlock($1, $2)', [...BRIDGE_LOCK_KEY]).catch(() => {}); // the session's end drops it anyway
      await client.end().catch(() => {});
    },
  };
}
