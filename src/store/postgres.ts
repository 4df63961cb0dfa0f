// The PostgreSQL store, `postgres://user:password@host:port/database` (or `postgresql://`): the settings of every
// connection the bridge opens to it, through knex's pool or held by itself (its lock, the migration lock), so that
// all of them read values the same way.
import type { Knex } from 'knex';
import pg from 'pg';

/**
 * pg returns int8 (bigint) as text, because it can exceed 2^53. Every int8 column here holds epoch milliseconds or
 * a count, far below 2^53: they come back as numbers, as SQLite gives them, whatever the query. Set per connection
 * rather than on pg's global parsers, which would change them for anything else in the process using pg.
 */
const INT8_OID = 20;
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? (text: string) => Number(text)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

export function connectionSettings(url: string): pg.ClientConfig {
  return {
    connectionString: url,
    types,
    application_name: 'agent-messaging-bridge',
    // A server that does not answer fails the start in 10 s rather than after TCP's minutes of retries.
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  };
}

/**
 * A small pool: a group commit takes one connection, admin reads, sweeps and the readiness probe the others.
 * Commits stay in order however many connections there are: the write-behind starts one only once the previous one
 * has ended (O2).
 */
const POOL_MAX = 4;

/** Longer than a busy pool makes a query wait (a commit of thousands of rows takes a second or so). */
const ACQUIRE_TIMEOUT_MS = 5_000;

export function postgresConfig(url: string): Knex.Config {
  return {
    client: 'pg',
    // lock_timeout: a statement waits at most 5 s for rows or tables another session locked (an operator's open
    // transaction), as SQLite's busy_timeout; a group commit then fails and is logged (O2) instead of hanging.
    // The object goes to pg.Client as it is; knex's type for it lacks some of pg's settings.
    connection: {
      ...connectionSettings(url),
      lock_timeout: 5_000,
    } satisfies pg.ClientConfig as Knex.PgConnectionConfig,
    pool: { min: 1, max: POOL_MAX },
    // A query waits at most this long for a connection (knex's default is a minute): with the server gone or not
    // answering, a group commit fails and is retried later (O15) and an admin call answers 500, instead of each
    // hanging a minute while connections that will never come back hold the pool.
    acquireConnectionTimeout: ACQUIRE_TIMEOUT_MS,
  };
}

/** Advisory lock keys (two int4: this application's space, then the lock), per database. 0x62726467 is "brdg". */
const LOCK_SPACE = 0x62726467;
export const BRIDGE_LOCK_KEY = [LOCK_SPACE, 1] as const;
const MIGRATION_LOCK_KEY = [LOCK_SPACE, 2] as const;

/** A connection of the bridge's own, outside knex's pool. */
export async function connect(url: string, applicationName?: string): Promise<pg.Client> {
  const client = new pg.Client({
    ...connectionSettings(url),
    ...(applicationName ? { application_name: applicationName } : {}),
  });
  // Without a listener a connection lost while idle would be an uncaught 'error'; the caller listens if it cares.
  client.on('error', () => {});
  await client.connect();
  return client;
}

/**
 * Runs `migrate` while holding the migration lock: nodes sharing the database that start together migrate one at a
 * time (knex's own lock table makes the second one fail instead of wait), and the next finds nothing left to do.
 */
export async function whileMigrating<T>(url: string, migrate: () => Promise<T>): Promise<T> {
  const client = await connect(url);
  try {
    await client.query('SELECT pg_advisory_lock($1, $2)', [...MIGRATION_LOCK_KEY]);
    return await migrate();
  } finally {
    await client.end().catch(() => {}); // the lock is the session's: it goes with it
  }
}
