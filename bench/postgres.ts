// A PostgreSQL database of the benchmark's own beside the one a server URL names (its role may create databases,
// as scripts/services.sh's `bridge` can): nothing another run or a test keeps there is read or changed, and
// dropping it afterwards leaves the server as it was.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** One statement on the server of `serverUrl`, on a connection of its own. */
async function onServer(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface BenchDatabase {
  /** DATABASE_URL of the new, empty database. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `bench_${randomBytes(6).toString('hex')}`;
  await onServer(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  // FORCE: a node that failed to stop must not keep the database (nor make the drop fail).
  return { url: url.toString(), name, drop: () => onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
