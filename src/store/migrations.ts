// The schema, as knex migrations kept in code (no migration files to locate at run time). One schema for SQLite and
// PostgreSQL: no SQLite-only types, timestamps as epoch milliseconds in bigint columns (read back as numbers on
// PostgreSQL too: postgres.ts), booleans as booleans, and what SQLite's loose typing accepted made explicit (004).
import type { Knex } from 'knex';

interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const MIGRATIONS: Migration[] = [
  {
    name: '001_registry',
    async up(knex) {
      await knex.schema.createTable('organizations', (t) => {
        t.string('org_id', 64).primary();
        t.string('name', 256).notNullable();
        t.bigInteger('created_at').notNullable();
      });
      await knex.schema.createTable('apps', (t) => {
        t.string('app_id', 64).primary();
        t.string('org_id', 64).notNullable().references('org_id').inTable('organizations');
        t.string('name', 256).notNullable();
        t.boolean('active').notNullable().defaultTo(true);
        t.bigInteger('created_at').notNullable();
        t.index(['org_id']);
      });
      await knex.schema.createTable('agents', (t) => {
        t.string('agent_id', 64).primary();
        t.string('org_id', 64).notNullable().references('org_id').inTable('organizations');
        t.string('name', 256).notNullable();
        t.text('description').notNullable().defaultTo('');
        t.integer('ttl_days').notNullable();
        t.boolean('allowlist_enabled').notNullable().defaultTo(false);
        t.boolean('active').notNullable().defaultTo(true);
        t.bigInteger('created_at').notNullable();
        t.index(['org_id']);
      });
      await knex.schema.createTable('agent_allowlist', (t) => {
        t.string('agent_id', 64).notNullable().references('agent_id').inTable('agents');
        t.string('app_id', 64).notNullable().references('app_id').inTable('apps');
        t.primary(['agent_id', 'app_id']);
      });
      await knex.schema.createTable('tokens', (t) => {
        t.string('hash', 64).primary(); // hex SHA-256: the token itself is never stored
        t.string('kind', 8).notNullable();
        t.string('owner_id', 64).notNullable();
        t.bigInteger('created_at').notNullable();
        t.bigInteger('expires_at').nullable();
        t.index(['owner_id']);
      });
    },
    async down(knex) {
      for (const table of ['tokens', 'agent_allowlist', 'agents', 'apps', 'organizations'])
        await knex.schema.dropTable(table);
    },
  },
  {
    name: '002_sessions_and_event_log',
    async up(knex) {
      await knex.schema.createTable('sessions', (t) => {
        t.string('session_key', 255).primary();
        t.string('agent_id', 64).notNullable();
        t.string('app_id', 64).notNullable();
        t.string('thread_id', 255).notNullable();
        t.bigInteger('created_at').notNullable();
        t.bigInteger('expires_at').notNullable();
        t.index(['expires_at']);
      });
      // One row per app event; never the payload (only its size).
      await knex.schema.createTable('events', (t) => {
        t.string('event_id', 128).primary();
        t.string('app_id', 64).notNullable();
        t.string('agent_id', 64).notNullable();
        t.string('thread_id', 255).nullable();
        t.string('session_key', 255).nullable();
        t.string('status', 16).notNullable();
        t.string('outcome', 16).notNullable();
        t.string('code', 32).nullable();
        t.integer('payload_bytes').notNullable();
        t.integer('tokens_used').nullable();
        t.bigInteger('received_at').notNullable();
        t.bigInteger('completed_at').nullable();
        t.integer('latency_ms').nullable();
        t.index(['app_id', 'event_id']);
        t.index(['agent_id', 'event_id']);
        t.index(['received_at']);
      });
    },
    async down(knex) {
      await knex.schema.dropTable('events');
      await knex.schema.dropTable('sessions');
    },
  },
  {
    name: '003_events_pending',
    // The rows still `pending`, by age, for marking those a crash left behind `lost` (O9) without scanning the
    // whole log every hour. Partial: a row leaves it when its outcome is written, so it holds about the events
    // in flight. Valid SQLite and PostgreSQL.
    async up(knex) {
      await knex.raw(
        `CREATE INDEX "events_pending_received_at" ON "events" ("received_at") WHERE "outcome" = 'pending'`,
      );
    },
    async down(knex) {
      await knex.raw('DROP INDEX "events_pending_received_at"');
    },
  },
  {
    name: '004_postgres_tokens_used',
    // An agent's `tokens_used` is any JSON integer (no maximum in the spec), and SQLite stores whatever number it
    // gets. PostgreSQL's integer stops at 2^31 - 1: one agent's reply over it failed the whole group commit, losing
    // every other row in it. A double holds every number JavaScript can give it, exactly. SQLite needs nothing.
    async up(knex) {
      if (knex.client.dialect === 'postgresql')
        await knex.raw('ALTER TABLE "events" ALTER COLUMN "tokens_used" TYPE double precision');
    },
    async down(knex) {
      if (knex.client.dialect === 'postgresql')
        await knex.raw('ALTER TABLE "events" ALTER COLUMN "tokens_used" TYPE integer');
    },
  },
  {
    name: '005_admin_audit',
    // The audit trail (D10): one row per admin change or dashboard sign-in/out. `detail` is JSON text (names,
    // fields, counts), the same on both databases; `at` is indexed for the retention sweep.
    async up(knex) {
      await knex.schema.createTable('admin_audit', (t) => {
        t.bigIncrements('audit_id').primary();
        t.bigInteger('at').notNullable();
        t.string('actor_kind', 32).notNullable();
        t.string('actor_session', 16).nullable();
        t.string('action', 64).notNullable();
        t.string('target', 64).nullable();
        t.text('detail').notNullable();
        t.index(['at']);
      });
    },
    async down(knex) {
      await knex.schema.dropTable('admin_audit');
    },
  },
  {
    name: '006_dashboard_sign_ins',
    // Dashboard sign-ins (D1), shared by every node on the database and kept across restarts: the SHA-256 of the
    // cookie, never the cookie. `expires_at` is indexed for the pruning each sign-in does.
    async up(knex) {
      await knex.schema.createTable('dashboard_sign_ins', (t) => {
        t.string('key', 64).primary();
        t.string('csrf_token', 64).notNullable();
        t.bigInteger('created_at').notNullable();
        t.bigInteger('expires_at').notNullable();
        t.index(['expires_at']);
      });
    },
    async down(knex) {
      await knex.schema.dropTable('dashboard_sign_ins');
    },
  },
];

export const migrationSource: Knex.MigrationSource<Migration> = {
  getMigrations: async () => MIGRATIONS,
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m,
};
