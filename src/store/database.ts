// DATABASE_URL -> a migrated knex instance. `sqlite:<path>` (relative to the working directory, or absolute;
// the folder is created) or `sqlite::memory:`.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { migrationSource } from './migrations.js';

export class DatabaseUrlError extends Error {}

function knexConfig(url: string): Knex.Config {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (!path) throw new DatabaseUrlError('DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/bridge.sqlite');
    const filename = path === ':memory:' ? ':memory:' : resolve(path);
    if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
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
  if (/^postgres(ql)?:\/\//.test(url)) {
    throw new DatabaseUrlError('DATABASE_URL postgres://… is not supported yet: this release stores data in SQLite (sqlite:<path>).');
  }
  throw new DatabaseUrlError(`DATABASE_URL must be sqlite:<path>; got ${JSON.stringify(url.replace(/\/\/[^@]*@/, '//***@'))}`);
}

export async function openDatabase(url: string): Promise<Knex> {
  const knex = knexFactory(knexConfig(url));
  await knex.migrate.latest({ migrationSource });
  return knex;
}
