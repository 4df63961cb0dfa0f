// The embedded store: `sqlite:<path>` (relative to the working directory, or absolute; the folder is created) or
// `sqlite::memory:`. One process per file: see database-lock.ts (O7).
import { mkdirSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Knex } from 'knex';
import type { Database } from 'sqlite3';
import { DatabaseOpenError, DatabaseUrlError } from './database-errors.js';

/** One name per file, whatever path reached it (relative, through a symlink), so that its lock is one file too. */
function canonical(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return join(realpathSync(dirname(file)), basename(file)); // not created yet
  }
}

/**
 * The absolute path of a `sqlite:<path>` DATABASE_URL, its folder created; undefined for `sqlite::memory:`, which
 * no other process can share.
 */
export function sqliteFile(url: string): string | undefined {
  const path = url.slice('sqlite:'.length);
  if (!path) throw new DatabaseUrlError('DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/bridge.sqlite');
  if (path === ':memory:') return undefined;
  try {
    mkdirSync(dirname(resolve(path)), { recursive: true });
  } catch (err) {
    throw new DatabaseOpenError(`cannot create the folder of the database ${resolve(path)}: ${(err as Error).message}`);
  }
  return canonical(resolve(path));
}

export function sqliteConfig(url: string): Knex.Config {
  const filename = sqliteFile(url) ?? ':memory:';
  return {
    client: 'sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    // One connection: SQLite serialises writes anyway, and :memory: is per connection.
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: Database, done: (err: Error | null, conn: unknown) => void) => {
        // busy_timeout: a group commit waits up to 5 s for another writer (a backup, an operator's shell).
        const journal = filename === ':memory:' ? 'MEMORY' : 'WAL';
        conn.exec(
          `PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA journal_mode = ${journal};`,
          (err: Error | null) => done(err, conn),
        );
      },
    },
  };
}

/** The oldest SQLite whose JSON functions the event log's commits use (jsonb, ->>: commit-sql.ts). */
export const SQLITE_MIN_VERSION = '3.45.0';

/** Whether `version` (as sqlite_version() gives it) is older than SQLITE_MIN_VERSION. */
export function sqliteTooOld(version: string): boolean {
  const have = version.split('.').map(Number);
  const need = SQLITE_MIN_VERSION.split('.').map(Number);
  for (const [i, part] of need.entries()) {
    const ahead = (have[i] ?? 0) - part;
    if (ahead) return ahead < 0;
  }
  return false;
}

/**
 * Refuses at start an SQLite too old for the event log, rather than failing every group commit later: the sqlite3
 * package's own build bundles a newer one; only a build against an old system library lacks it.
 */
export async function checkSqliteVersion(knex: Knex): Promise<void> {
  const [row] = (await knex.raw('SELECT sqlite_version() AS version')) as { version: string }[];
  const version = row?.version ?? '0';
  if (sqliteTooOld(version))
    throw new Error(
      `SQLite ${version} is too old: the bridge needs ${SQLITE_MIN_VERSION} or later (its JSONB functions)`,
    );
}
