// DATABASE_URL -> a migrated knex instance, and the lock that keeps a second bridge off the same database.
// `sqlite:<path>` / `sqlite::memory:` (the embedded default, sqlite.ts) or `postgres://…` (postgres.ts).
import knexFactory, { type Knex } from 'knex';
import type { Logger } from '../shared/logger.js';
import { lockDatabase, type DatabaseLock } from './database-lock.js';
import { DatabaseOpenError, DatabaseUrlError } from './database-errors.js';
import { isPostgresUrl } from './database-url.js';
import { shownUrl } from '../shared/shown-url.js';
import { migrationSource } from './migrations.js';
import { postgresConfig, whileMigrating } from './postgres.js';
import { lockPostgres } from './postgres-lock.js';
import { checkSqliteVersion, sqliteConfig, sqliteFile } from './sqlite.js';

export interface ClaimOptions {
  /**
   * The database is shared by the nodes of one bridge (REDIS_URL carries what they must share): take no lock.
   * Only PostgreSQL can be shared; SQLite serves one process whatever this says.
   */
  shared?: boolean;
}

function kind(url: string): 'sqlite' | 'postgres' {
  if (url.startsWith('sqlite:')) return 'sqlite';
  if (isPostgresUrl(url)) return 'postgres';
  throw new DatabaseUrlError(
    `DATABASE_URL must be sqlite:<path> or postgres://user:password@host:port/database; got ${JSON.stringify(shownUrl(url))}`,
  );
}

/**
 * Takes the one-bridge lock of the database (O7 for an SQLite file, O13 for PostgreSQL) before anything reads it, or
 * throws DatabaseInUseError naming the database; undefined when no lock is needed (`sqlite::memory:`, or a
 * PostgreSQL database `shared` by a cluster). Release it after the database is closed.
 */
export async function claimDatabase(
  url: string,
  log: Logger,
  options: ClaimOptions = {},
): Promise<DatabaseLock | undefined> {
  if (kind(url) === 'postgres') return options.shared ? undefined : lockPostgres(url, log);
  const file = sqliteFile(url);
  return file ? lockDatabase(file, log) : undefined;
}

/** knex on the database, as the bridge reads it, without migrating: for tools and tests that read what a bridge wrote. */
export function connectDatabase(url: string): Knex {
  return knexFactory({
    ...(kind(url) === 'postgres' ? postgresConfig(url) : sqliteConfig(url)),
    // A failed statement's error says the statement without its values: they are tenants' ids and names, token
    // hashes, and for a group commit thousands of rows, which would all go to the log.
    compileSqlOnError: false,
    // knex prints a failed connection with its stack before it rejects, and a pooled connection the server ended
    // when it finds it dead; the rejection alone says it (openDatabase, the event log's retries, /readyz).
    log: {
      warn: (message: string) =>
        void (/^(Acquire connection error|Connection Error: )/.test(message) || console.warn(message)),
    },
  });
}

/** Opens and migrates; a database that cannot be used throws DatabaseOpenError naming it, the pool closed again. */
export async function openDatabase(url: string): Promise<Knex> {
  const knex = connectDatabase(url);
  const migrate = () => knex.migrate.latest({ migrationSource });
  try {
    if (kind(url) === 'postgres') await whileMigrating(url, migrate);
    else await checkSqliteVersion(knex).then(migrate);
  } catch (err) {
    await knex.destroy().catch(() => {});
    throw new DatabaseOpenError(`cannot open the database ${shownUrl(url)}: ${(err as Error).message}`);
  }
  return knex;
}

/**
 * Resolves when the database answers a trivial query; rejects when it fails, or after `ms` without an answer: a
 * server behind a network that drops packets would otherwise keep the caller (the readiness probe) waiting for as
 * long as TCP takes to give up, minutes. Real time, not the bridge's clock: this waits on I/O.
 */
export async function databaseAnswers(db: Knex, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const silence = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the database did not answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([db.raw('select 1'), silence]);
  } finally {
    clearTimeout(timer);
  }
}
