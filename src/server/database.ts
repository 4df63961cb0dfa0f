// The database and the lock that keeps a second bridge off it (O7, O13): the first services started, the last
// stopped, so nothing reads the database before the lock is held or writes to it once the lock is let go.
import type { Knex } from 'knex';
import type { Config } from '../config.js';
import type { Logger } from '../shared/logger.js';
import { claimDatabase, openDatabase } from '../store/database.js';
import type { DatabaseLock } from '../store/database-lock.js';
import type { Service } from './services.js';

/**
 * One bridge per database, checked before anything reads it; :memory: is this process's alone. The nodes of one
 * bridge (REDIS_URL) share theirs. Released last: the next bridge may open the file once this one no longer writes.
 */
export function databaseLock(config: Config, log: Logger): Service<DatabaseLock | undefined> {
  return {
    name: 'database lock',
    start: () => claimDatabase(config.databaseUrl, log, { shared: Boolean(config.redisUrl) }),
    stop: (lock) => lock?.release(),
  };
}

export function database(url: string): Service<Knex> {
  return { name: 'database', start: () => openDatabase(url), stop: (db) => db.destroy() };
}
