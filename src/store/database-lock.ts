// One bridge process per SQLite file (O7). SQLite itself lets several processes share a file, but a bridge keeps
// the registry, sessions and connections in memory: a second process on the same file would go on accepting a
// token that the first one revoked, and split an agent's connections between two routers.
//
// The lock is SQLite's own file lock (a kernel lock, `fcntl`), held on `<database>.lock` for the life of the
// process: the kernel drops it when the process ends however it ends (SIGKILL, a crash), so there is never a stale
// lock to guess about, and processes in other containers on the same volume see it too. The database file itself
// stays unlocked, so a backup or an operator's `sqlite3` shell can still read it while the bridge runs. The
// holder's pid is written in the lock file's header (`user_version`, bytes 60-63) so that a refused process can
// name it; a clean shutdown writes 0 there, so a pid found at start belongs to a process that ended without one.
//
// The lock is found by the file's name (symlinks and relative paths resolved: sqlite.ts), and SQLite names its WAL
// after it too. A file with a second name (a hard link) could be opened by each name with a lock and a WAL of its
// own: two bridges, diverging data. Such a file is refused; one name per database file.
import { readFileSync, statSync } from 'node:fs';
import sqlite3 from 'sqlite3';
import type { Logger } from '../shared/logger.js';
import { DatabaseInUseError } from './database-errors.js';

/** A database held by this bridge alone (this file's lock, or PostgreSQL's advisory lock: postgres-lock.ts). */
export interface DatabaseLock {
  /** Lets the lock go (here: marks the lock file clean first); the next bridge may start. */
  release(): Promise<void>;
}

/** sqlite3's callback API as promises, for the few statements the lock needs. */
function run(db: sqlite3.Database, sql: string): Promise<void> {
  return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
}

function value<T>(db: sqlite3.Database, sql: string): Promise<T> {
  return new Promise((resolve, reject) =>
    db.get<Record<string, T>>(sql, (err, row) => (err ? reject(err) : resolve(Object.values(row)[0]!))),
  );
}

function open(path: string): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db: sqlite3.Database = new sqlite3.Database(path, (err) => (err ? reject(err) : resolve(db)));
  });
}

function close(db: sqlite3.Database): Promise<void> {
  return new Promise((resolve) => db.close(() => resolve()));
}

/** The holder's pid, read from the lock file's header without SQLite (which the holder's lock keeps out). */
function holderPid(path: string): number | undefined {
  try {
    const pid = readFileSync(path).readInt32BE(60);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined; // not written yet, or gone: the message just names no pid
  }
}

function inUse(file: string, path: string): DatabaseInUseError {
  const pid = holderPid(path);
  return new DatabaseInUseError(
    `the database file ${file} is in use by another bridge process${pid ? ` (pid ${pid})` : ''}; SQLite serves one process — ` +
      `for several nodes use PostgreSQL + Redis (the README's "Several nodes"). Stop the other process, or give this one its own DATABASE_URL.`,
  );
}

/** How many names (hard links) the file has; 1 for one not created yet, or not a file (SQLite says what is wrong then). */
function names(file: string): number {
  try {
    const stat = statSync(file);
    return stat.isFile() ? stat.nlink : 1;
  } catch {
    return 1;
  }
}

/**
 * Takes the lock of the SQLite database `file` (an absolute path) or throws DatabaseInUseError at once (no busy
 * wait: a second bridge is a configuration mistake, not contention).
 */
export async function lockDatabase(file: string, log: Logger): Promise<DatabaseLock> {
  const links = names(file);
  if (links > 1) {
    throw new DatabaseInUseError(
      `the database file ${file} has ${links} names (hard links): a bridge started on another of them would lock that name and keep a WAL ` +
        `of its own, and the two would diverge. Give the file one name (remove the other links: find / -xdev -samefile ${file}), or copy it.`,
    );
  }
  const path = `${file}.lock`;
  let db: sqlite3.Database;
  try {
    db = await open(path);
  } catch (err) {
    throw new DatabaseInUseError(`cannot create the lock file ${path} of the database: ${(err as Error).message}`);
  }
  try {
    // EXCLUSIVE locking mode keeps the lock after COMMIT; the journal stays in memory so no file is left beside.
    await run(
      db,
      'PRAGMA busy_timeout = 0; PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY; BEGIN EXCLUSIVE',
    );
  } catch (err) {
    await close(db);
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw inUse(file, path);
    throw new DatabaseInUseError(
      `cannot lock the database file ${file} through ${path} (${(err as Error).message}); if no bridge process runs, remove ${path}`,
    );
  }
  try {
    const previous = await value<number>(db, 'PRAGMA user_version');
    if (previous !== 0)
      log.warn(
        { pid: previous, lock: path },
        'database lock taken over from a bridge process that ended without a clean shutdown',
      );
    await run(db, `PRAGMA user_version = ${process.pid}; COMMIT`);
  } catch (err) {
    await close(db);
    throw err;
  }
  return {
    async release() {
      await run(db, 'PRAGMA user_version = 0').catch(() => {}); // the lock goes with the connection anyway
      await close(db);
    },
  };
}
