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
