// The store tests run once per database the bridge supports: `describeEachDatabase(title, (db) => …)` makes
// `title (SQLite)` and `title (PostgreSQL)`, each test with a fresh, empty database of its own (`db.url()`), removed
// after it. PostgreSQL needs a server: TEST_POSTGRES_URL names a database whose role may create databases (each test
// gets `bridge_t_<random>` beside it). Without it the PostgreSQL variants are pending, the reason in their title.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import pg from 'pg';
import { connectDatabase, openDatabase } from '../../src/store/database.js';
import { stopAll } from './bridge.js';

export interface TestDatabase {
  readonly name: 'SQLite' | 'PostgreSQL';
  readonly postgres: boolean;
  /** DATABASE_URL of this test's own database, empty until a bridge (or `open`) migrates it. */
  url(): string;
  /**
   * The database opened as the bridge opens it, for the test to read or write rows itself; closed after the test.
   * `migrate` when no bridge has made the schema yet (migrating writes, which a test holding a lock must not).
   */
  open(options?: { migrate?: boolean }): Promise<Knex>;
}

/** A database made for one test, and how to remove it. */
interface Made {
  url: string;
  remove(): Promise<void>;
}

interface Kind {
  name: TestDatabase['name'];
  /** Why its tests cannot run here; undefined: they can. */
  unavailable: string | undefined;
  make(): Promise<Made>;
}

const POSTGRES_URL = process.env.TEST_POSTGRES_URL || undefined;

const SQLITE: Kind = {
  name: 'SQLite',
  unavailable: undefined,
  async make() {
    const dir = mkdtempSync(join(tmpdir(), 'bridge-db-'));
    return {
      url: `sqlite:${join(dir, 'bridge.sqlite')}`,
      remove: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

/** One statement on the server of TEST_POSTGRES_URL, on a connection of its own (no pool left to hold mocha open). */
async function onServer(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const POSTGRES: Kind = {
  name: 'PostgreSQL',
  unavailable: POSTGRES_URL ? undefined : 'pending: set TEST_POSTGRES_URL: eval "$(bash scripts/services.sh start)"',
  async make() {
    const name = `bridge_t_${randomBytes(6).toString('hex')}`;
    // Sorted as most production databases sort text (en_US: hyphens ignored), not byte by byte as a test server
    // made with the C locale would: no test passes only because of its server's locale.
    await onServer(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US-u-ka-shifted'`);
    const url = new URL(POSTGRES_URL!);
    url.pathname = `/${name}`;
    // FORCE: a bridge a failed test left running must not keep its database (nor fail the next test's clean-up).
    return { url: url.toString(), remove: () => dropDatabase(name) };
  },
};

/**
 * FORCE ends the sessions on the database, but PostgreSQL refuses (42501) to end a process that runs as no role,
 * which only a superuser may: an autovacuum worker on the tables a test filled, or a connection still starting up.
 * Those end by themselves within moments: the drop is tried again.
 */
async function dropDatabase(name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } catch (err) {
      if ((err as { code?: unknown }).code !== '42501' || attempt === 50) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A suite's body, given its database; `this` is the suite (`this.timeout(…)`). */
type Body = (this: Mocha.Suite, db: TestDatabase) => void;

function describeOn(kind: Kind, title: string, body: Body): void {
  describe(`${title} (${kind.name}${kind.unavailable ? ` — ${kind.unavailable}` : ''})`, function () {
    let made: Made | undefined;
    const opened: Knex[] = [];
    if (kind.unavailable) {
      before(function () {
        this.skip();
      });
    } else {
      beforeEach(async function () {
        made = await kind.make();
      });
    }
    const url = () => {
      if (!made) throw new Error('db.url() is for tests and their hooks: the database is made before each test');
      return made.url;
    };
    body.call(this, {
      name: kind.name,
      postgres: kind === POSTGRES,
      url,
      async open({ migrate = false } = {}) {
        const knex = migrate ? await openDatabase(url()) : connectDatabase(url());
        opened.push(knex);
        return knex;
      },
    });
    // Registered after the body's hooks, so it runs after them: the bridges and connections first, then the database.
    afterEach(async function () {
      await stopAll();
      await Promise.all(opened.splice(0).map((k) => k.destroy()));
      await made?.remove();
      made = undefined;
    });
  });
}

/** `title (SQLite)` and `title (PostgreSQL)`, the same tests on each. */
export function describeEachDatabase(title: string, body: Body): void {
  describeOn(SQLITE, title, body);
  describeOn(POSTGRES, title, body);
}

/** Tests of what only SQLite has (its file, its pragmas). */
export function describeSqlite(title: string, body: Body): void {
  describeOn(SQLITE, title, body);
}

/** Tests of what only PostgreSQL has (its lock, its types). */
export function describePostgres(title: string, body: Body): void {
  describeOn(POSTGRES, title, body);
}
