// DATABASE_URL -> a migrated knex instance. `sqlite:<path>` (relative to the working directory, or absolute;
// the folder is created) or `sqlite::memory:`. One process per file: see database-lock.ts (O7).
import { mkdirSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { migrationSource } from './migrations.js';

export class DatabaseUrlError extends Error {}

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
 * no other process can share. Throws DatabaseUrlError for a URL the bridge cannot use.
 */
export function sqliteFile(url: string): string | undefined {
  if (!url.startsWith('sqlite:')) throw unsupported(url);
  const path = url.slice('sqlite:'.length);
  if (!path) throw new DatabaseUrlError('DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/bridge.sqlite');
  if (path === ':memory:') return undefined;
  mkdirSync(dirname(resolve(path)), { recursive: true });
  return canonical(resolve(path));
}

function unsupported(url: string): DatabaseUrlError {
  if (/^postgres(ql)?:\/\//.test(url)) {
    return new DatabaseUrlError('DATABASE_URL postgres://… is not supported yet: this release stores data in SQLite (sqlite:<path>).');
  }
  return new DatabaseUrlError(`DATABASE_URL must be sqlite:<path>; got ${JSON.stringify(url.replace(/\/\/[^@]*@/, '//***@'))}`);
}

function knexConfig(url: string): Knex.Config {
  const filename = sqliteFile(url) ?? ':memory:';
  return {
    client: 'sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    // One connection: SQLite serialises writes anyway, and :memory: is per connection.
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: any, done: (err: Error | null, conn: unknown) => void) => {
        // busy_timeout: a group commit waits up to 5 s for another writer (a backup, an operator's shell).
        const journal = filename === ':memory:' ? 'MEMORY' : 'WAL';
        conn.exec(`PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA journal_mode = ${journal};`, (err: Error | null) => done(err, conn));
      },
    },
  };
}

export async function openDatabase(url: string): Promise<Knex> {
  const knex = knexFactory(knexConfig(url));
  await knex.migrate.latest({ migrationSource });
  return knex;
}
