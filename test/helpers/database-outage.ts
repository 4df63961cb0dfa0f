// Making a test's database stop taking writes for a while, without stopping the server other tests share: another
// session holding a lock against writers, or PostgreSQL cut off behind a TCP proxy (tcp-proxy.ts).
import type { Knex } from 'knex';
import { connectDatabase } from '../../src/store/database.js';
import type { TestDatabase } from './databases.js';
import { closeTcpProxies, startTcpProxy } from './tcp-proxy.js';

/**
 * Another session holding the event log against writers until released, as an operator's open transaction or a
 * backup would: SQLite's exclusive lock on the whole file, PostgreSQL's lock on the events table. `holder` reads
 * through that session.
 */
export async function lockAgainstWriters(db: TestDatabase): Promise<{ holder: Knex; release(): Promise<void> }> {
  const knex = await db.open(); // SQLite: one connection, so BEGIN and what follows share it
  let held = true;
  if (!db.postgres) {
    await knex.raw('BEGIN EXCLUSIVE');
    return { holder: knex, release: async () => void (held && ((held = false), await knex.raw('COMMIT'))) };
  }
  const trx = await knex.transaction();
  await trx.raw('LOCK TABLE "events" IN EXCLUSIVE MODE');
  return { holder: trx, release: async () => void (held && ((held = false), await trx.commit())) };
}

export interface WriterOutage {
  /** The writer's connection to the test's database, migrated. */
  knex: Knex;
  /** From now on the writer's commits fail at once, as with a database gone. */
  begin(): Promise<void>;
  /** And from now on they succeed again. */
  end(): Promise<void>;
}

const writers: Knex[] = [];

/**
 * PostgreSQL: the writer connects through a proxy that is cut (open connections reset, new ones refused). SQLite,
 * which has no server to lose: another session holds the write lock, and the writer's connection waits for no lock
 * (busy_timeout 0 instead of the bridge's 5 s, so that a test's outage is not 5 s per commit).
 */
export async function writerWithOutage(db: TestDatabase): Promise<WriterOutage> {
  const migrated = await db.open({ migrate: true });
  if (db.postgres) {
    const proxy = await startTcpProxy(db.url());
    const knex = connectDatabase(proxy.url);
    writers.push(knex);
    return { knex, begin: () => proxy.cut(), end: () => proxy.restore() };
  }
  await migrated.raw('PRAGMA busy_timeout = 0'); // its pool is one connection, kept
  let lock: Awaited<ReturnType<typeof lockAgainstWriters>> | undefined;
  return {
    knex: migrated,
    begin: async () => void (lock = await lockAgainstWriters(db)),
    end: async () => lock?.release(),
  };
}

/** Ends every outage a test began and closes the writers' connections (from its afterEach, before the database goes). */
export async function endOutages(): Promise<void> {
  await closeTcpProxies();
  await Promise.all(writers.splice(0).map((k) => k.destroy()));
}

export interface FullDisk {
  /** From now on the database can grow by this many pages (4 KiB each) more, and then is full again. */
  room(pages: number): Promise<void>;
  /** And from now on as much as it likes. */
  free(): Promise<void>;
}

/**
 * An SQLite database whose disk is full from now on: it answers every read (and `select 1`), and every commit that
 * would make it grow fails with SQLITE_FULL, as on a full disk. SQLite's `max_page_count`, on `knex`'s connection
 * (the bridge's pool is one connection, kept); it never goes below the pages the file has.
 */
export async function fillDisk(knex: Knex): Promise<FullDisk> {
  const pages = async () => Number((await knex.raw('PRAGMA page_count'))[0].page_count);
  await knex.raw(`PRAGMA max_page_count = ${await pages()}`);
  return {
    room: async (more) => void (await knex.raw(`PRAGMA max_page_count = ${(await pages()) + more}`)),
    free: async () => void (await knex.raw('PRAGMA max_page_count = 4294967294')),
  };
}
