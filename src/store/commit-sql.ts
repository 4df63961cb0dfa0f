// A group commit as SQL: multi-row upserts of event and session rows and deletes of sessions, as few statements as
// the database's limits allow. Knex's query compiler took a tenth of the bridge's time under event load (it
// re-quotes every column of every row each commit), so the text is made here, once per table and row count.
//
// SQLite gets the rows as one JSON text bound once and read back with json_each: binding 13 values a row cost the
// main thread more than the rest of the event log (node-sqlite3 converts each value there, and knex scans the SQL
// for every placeholder); one string is handed over as it is, the statement text is the same for every commit, and
// the rows are read in SQLite's thread. PostgreSQL keeps bound values: pg sends them as text, cheaply, and takes
// each value's type from its target column.
import type { Knex } from 'knex';
import type { Batch, EventRow, SessionRow } from './change-queue.js';

export type Dialect = 'sqlite' | 'postgres';

export const dialectOf = (db: Knex): Dialect => (db.client.dialect === 'postgresql' ? 'postgres' : 'sqlite');

/**
 * `columns` as they are, when they name every field of `R`: a field added to the spec (so to the record) fails to
 * compile here until it has a column (and a migration), rather than being dropped silently on write.
 */
function everyColumn<R>() {
  return <const C extends readonly (keyof R)[]>(
    ...columns: C &
      ([Exclude<keyof R, C[number]>] extends [never] ? unknown : { missing: Exclude<keyof R, C[number]> }[])
  ) => columns;
}

const EVENT_COLUMNS = everyColumn<EventRow>()(
  'event_id',
  'app_id',
  'agent_id',
  'thread_id',
  'session_key',
  'status',
  'outcome',
  'code',
  'payload_bytes',
  'tokens_used',
  'received_at',
  'completed_at',
  'latency_ms',
);
const SESSION_COLUMNS = everyColumn<SessionRow>()(
  'session_key',
  'agent_id',
  'app_id',
  'thread_id',
  'created_at',
  'expires_at',
);

/**
 * Rows per statement. PostgreSQL: 13 columns x 2,500 rows = 32,500 bound values, under its 65,535. SQLite: one bound
 * text of ~250 bytes a row, far under its 1 GB; a commit of the default EVENT_LOG_COMMIT_MAX_ROWS is one statement,
 * so it runs without BEGIN/COMMIT.
 */
const ROWS_PER_STATEMENT: Record<Dialect, number> = { postgres: 2_500, sqlite: 50_000 };

type Statement = [string, Knex.Value[]];

interface Table<R> {
  name: string;
  columns: readonly (keyof R & string)[];
  key: keyof R & string;
}
const EVENTS: Table<EventRow> = { name: 'events', columns: EVENT_COLUMNS, key: 'event_id' };
const SESSIONS: Table<SessionRow> = { name: 'sessions', columns: SESSION_COLUMNS, key: 'session_key' };

const quoted = (names: readonly string[]) => names.map((c) => `"${c}"`).join(', ');

function onConflict(table: Table<unknown>): string {
  const updates = table.columns
    .filter((c) => c !== table.key)
    .map((c) => `"${c}" = excluded."${c}"`)
    .join(', ');
  return `ON CONFLICT ("${table.key}") DO UPDATE SET ${updates}`;
}

/** PostgreSQL: `VALUES (?, …), …` made once per row count (the same as knex's `insert(rows).onConflict().merge()`). */
function valuesUpsert<R>(table: Table<R>): (rows: R[]) => Statement {
  const cache = new Map<number, string>();
  const head = `INSERT INTO "${table.name}" (${quoted(table.columns)}) VALUES `;
  const tuple = `(${table.columns.map(() => '?').join(', ')})`;
  const tail = ` ${onConflict(table as Table<unknown>)}`;
  return (rows) => {
    let sql = cache.get(rows.length);
    if (!sql) cache.set(rows.length, (sql = `${head}${Array(rows.length).fill(tuple).join(', ')}${tail}`));
    const values: Knex.Value[] = [];
    for (const row of rows) for (const c of table.columns) values.push((row[c] ?? null) as Knex.Value);
    return [sql, values];
  };
}

/**
 * SQLite: the rows as a JSON array of arrays, column by column, made JSONB once (a commit of 1,000 rows took 15%
 * less CPU than json_each over the text, which parses each row's array again). `WHERE true` is what SQLite's parser
 * needs to read the ON CONFLICT of an INSERT … SELECT as the upsert's. JSONB needs SQLite 3.45 (sqlite.ts checks).
 */
function jsonUpsert<R>(table: Table<R>): (rows: R[]) => Statement {
  const read = table.columns.map((_, i) => `value ->> ${i}`).join(', ');
  const sql = `INSERT INTO "${table.name}" (${quoted(table.columns)}) SELECT ${read} FROM json_each(jsonb(?)) WHERE true ${onConflict(table as Table<unknown>)}`;
  return (rows) => [sql, [jsonText(rows.map((row) => table.columns.map((c) => row[c] ?? null)))]];
}

/**
 * The JSON of `value`, as SQLite would store its strings if they were bound: a lone surrogate (a client's thread_id
 * may hold one) becomes U+FFFD, as node-sqlite3's binding makes it, not the invalid UTF-8 json_each would make of its
 * `\udXXX` escape. JSON.stringify writes such an escape only for a lone surrogate (an escaped backslash followed by
 * `ud8…` matches too, harmlessly).
 */
function jsonText(value: unknown[]): string {
  const json = JSON.stringify(value);
  if (!/\\ud[89a-f]/.test(json)) return json;
  return JSON.stringify(value, (_, v: unknown) =>
    typeof v === 'string' ? (v as string & { toWellFormed(): string }).toWellFormed() : v,
  );
}

const STATEMENTS = {
  postgres: {
    events: valuesUpsert(EVENTS),
    sessions: valuesUpsert(SESSIONS),
    deletes: (keys: string[]): Statement => [
      `DELETE FROM "sessions" WHERE "session_key" IN (${Array(keys.length).fill('?').join(', ')})`,
      keys,
    ],
  },
  sqlite: {
    events: jsonUpsert(EVENTS),
    sessions: jsonUpsert(SESSIONS),
    deletes: (keys: string[]): Statement => [
      `DELETE FROM "sessions" WHERE "session_key" IN (SELECT value FROM json_each(jsonb(?)))`,
      [jsonText(keys)],
    ],
  },
} satisfies Record<Dialect, unknown>;

/** A batch as SQL statements with their bound values, as few as the dialect's ROWS_PER_STATEMENT allows. */
export function commitStatements(batch: Batch, dialect: Dialect): Statement[] {
  const make = STATEMENTS[dialect];
  const step = ROWS_PER_STATEMENT[dialect];
  const out: Statement[] = [];
  for (let i = 0; i < batch.events.length; i += step) out.push(make.events(batch.events.slice(i, i + step)));
  for (let i = 0; i < batch.sessionUpserts.length; i += step)
    out.push(make.sessions(batch.sessionUpserts.slice(i, i + step)));
  for (let i = 0; i < batch.sessionDeletes.length; i += step)
    out.push(make.deletes(batch.sessionDeletes.slice(i, i + step)));
  return out;
}
