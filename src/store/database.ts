// DATABASE_URL -> a migrated knex instance. `sqlite:<path>` (relative to the working directory, or absolute;
// the folder is created) or `sqlite::memory:`. One process per file: see database-lock.ts (O7).
import { mkdirSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { migrationSource } from './migrations.js';

export class DatabaseUrlError extends Error {}

/** The database named by a usable DATABASE_URL could not be opened (a folder in its place, not SQLite, no access). */
export class DatabaseOpenError extends Error {}

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
  try {
    mkdirSync(dirname(resolve(path)), { recursive: true });
  } catch (err) {
    throw new DatabaseOpenError(`cannot create the folder of the database ${resolve(path)}: ${(err as Error).message}`);
  }
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
    // knex prints a failed connection with its stack before it rejects; the rejection alone says it (openDatabase).
    log: { warn: (message: string) => void (message.startsWith('Acquire connection error') || console.warn(message)) },
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

/** Opens and migrates; a database that cannot be used throws DatabaseOpenError naming it, the pool closed again. */
export async function openDatabase(url: string): Promise<Knex> {
  const knex = knexFactory(knexConfig(url));
  try {
    await knex.migrate.latest({ migrationSource });
  } catch (err) {
    await knex.destroy().catch(() => {});
    throw new DatabaseOpenError(`cannot open the database ${url}: ${(err as Error).message}`);
  }
  return knex;
}
