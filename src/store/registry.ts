// Organizations, apps, agents, allowlists and token hashes in the database, and loading them into the
// in-memory Directory at start.
import type { Knex } from 'knex';
import type { AgentRecord, AppRecord, Directory, OrgRecord, TokenRecord } from '../core/directory.js';
import type { ClientKind } from '../../generated/index.js';

/** SQLite has no boolean: it gives 1 and 0 (PostgreSQL true and false). Numbers are numbers on both (postgres.ts). */
const bool = (v: unknown) => v === true || v === 1;

/**
 * Whether the organization is there, held until the transaction ends against its deletion (which takes its row
 * FOR UPDATE first): a change inside an organization either comes before the deletion, which then removes it too,
 * or finds it gone, never half of each (PostgreSQL refused the deletion, or the change, with a foreign-key error:
 * HTTP 500). SQLite runs one transaction at a time on the bridge's one connection, and ignores FOR SHARE.
 */
async function holdOrg(trx: Knex.Transaction, orgId: string): Promise<boolean> {
  return (await trx('organizations').where({ org_id: orgId }).forShare().first('org_id')) !== undefined;
}

/** Whether the app or agent is there, its organization held as by holdOrg. */
async function holdOwner(trx: Knex.Transaction, kind: ClientKind, id: string, orgId: string): Promise<boolean> {
  if (!(await holdOrg(trx, orgId))) return false;
  const [table, key] = kind === 'app' ? ['apps', 'app_id'] : ['agents', 'agent_id'];
  return (
    (await trx(table)
      .where({ [key]: id })
      .first(key)) !== undefined
  );
}

export class RegistryStore {
  constructor(private readonly db: Knex) {}

  async load(directory: Directory): Promise<void> {
    for (const r of await this.db('organizations').select()) {
      directory.addOrg({ org_id: r.org_id, name: r.name, created_at: r.created_at });
    }
    for (const r of await this.db('apps').select()) {
      directory.addApp({
        app_id: r.app_id,
        org_id: r.org_id,
        name: r.name,
        active: bool(r.active),
        created_at: r.created_at,
      });
    }
    const allowlists = new Map<string, string[]>();
    for (const r of await this.db('agent_allowlist').select()) {
      allowlists.set(r.agent_id, [...(allowlists.get(r.agent_id) ?? []), r.app_id]);
    }
    for (const r of await this.db('agents').select()) {
      directory.addAgent({
        agent_id: r.agent_id,
        org_id: r.org_id,
        name: r.name,
        description: r.description,
        ttl_days: r.ttl_days,
        // Sorted here as Registry.setAllowlist sorts it, not by the database: PostgreSQL's collation (en_US ignores
        // hyphens) would order ids otherwise than before the restart.
        allowlist: bool(r.allowlist_enabled) ? (allowlists.get(r.agent_id) ?? []).sort() : null,
        active: bool(r.active),
        created_at: r.created_at,
      });
    }
    for (const r of await this.db('tokens').select()) {
      directory.addToken({
        hash: Buffer.from(r.hash, 'hex'),
        kind: r.kind,
        owner_id: r.owner_id,
        created_at: r.created_at,
        expires_at: r.expires_at,
      });
    }
  }

  async insertOrg(org: OrgRecord): Promise<void> {
    await this.db('organizations').insert(org);
  }

  /** Whether the app was added (false: its organization is gone, deleted meanwhile). */
  async insertApp(app: AppRecord, token: TokenRecord): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      if (!(await holdOrg(trx, app.org_id))) return false;
      await trx('apps').insert(app);
      await trx('tokens').insert(tokenRow(token));
      return true;
    });
  }

  /** Whether the agent was added (false: its organization is gone, deleted meanwhile). */
  async insertAgent(agent: AgentRecord, token: TokenRecord): Promise<boolean> {
    const { allowlist, ...row } = agent;
    return this.db.transaction(async (trx) => {
      if (!(await holdOrg(trx, agent.org_id))) return false;
      await trx('agents').insert({ ...row, allowlist_enabled: allowlist !== null });
      await trx('tokens').insert(tokenRow(token));
      return true;
    });
  }

  /** Whether the organization was there to change (false: deleted meanwhile). */
  async updateOrg(orgId: string, fields: { name: string }): Promise<boolean> {
    return (await this.db('organizations').where({ org_id: orgId }).update(fields)) > 0;
  }

  async updateApp(appId: string, fields: { name: string }): Promise<boolean> {
    return (await this.db('apps').where({ app_id: appId }).update(fields)) > 0;
  }

  async updateAgent(
    agentId: string,
    fields: Partial<Pick<AgentRecord, 'name' | 'description' | 'ttl_days'>>,
  ): Promise<boolean> {
    return (await this.db('agents').where({ agent_id: agentId }).update(fields)) > 0;
  }

  /**
   * Starts the grace of the owner's current tokens and adds the new one, atomically; false when the owner is gone
   * (its organization deleted meanwhile: the new token would outlive it).
   */
  async rotate(
    owner: { kind: ClientKind; id: string; orgId: string },
    graceEndsAt: number,
    next: TokenRecord,
  ): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      if (!(await holdOwner(trx, owner.kind, owner.id, owner.orgId))) return false;
      await trx('tokens').where({ owner_id: owner.id }).whereNull('expires_at').update({ expires_at: graceEndsAt });
      await trx('tokens').insert(tokenRow(next));
      return true;
    });
  }

  /** Whether the app or agent was there to deactivate. */
  async deactivate(kind: ClientKind, id: string): Promise<boolean> {
    return (
      (await this.db(kind === 'app' ? 'apps' : 'agents')
        .where(kind === 'app' ? { app_id: id } : { agent_id: id })
        .update({ active: false })) > 0
    );
  }

  /**
   * Removes an organization with its apps and agents, their allowlists, tokens (rotated-out ones included) and
   * sessions, in one transaction; undefined when there was no such organization (a concurrent delete won).
   * Children go first for the foreign keys. The ids are selected by subqueries, so no statement grows with the
   * organization (SQLite's limit on bound variables) and the SQL is the same on PostgreSQL. Event-log rows stay:
   * they hold only ids, and retention removes them.
   */
  async deleteOrg(orgId: string): Promise<{ apps: number; agents: number } | undefined> {
    return this.db.transaction(async (trx) => {
      // First, and FOR UPDATE: a change holding the organization (holdOrg) ends before this goes on, and one that
      // comes later finds it gone.
      if ((await trx('organizations').where({ org_id: orgId }).forUpdate().first('org_id')) === undefined)
        return undefined;
      const appIds = () => trx('apps').select('app_id').where({ org_id: orgId });
      const agentIds = () => trx('agents').select('agent_id').where({ org_id: orgId });
      await trx('agent_allowlist').whereIn('agent_id', agentIds()).orWhereIn('app_id', appIds()).delete();
      await trx('tokens')
        .where((q) => q.where({ kind: 'app' }).whereIn('owner_id', appIds()))
        .orWhere((q) => q.where({ kind: 'agent' }).whereIn('owner_id', agentIds()))
        .delete();
      await trx('sessions').whereIn('agent_id', agentIds()).orWhereIn('app_id', appIds()).delete();
      const apps = await trx('apps').where({ org_id: orgId }).delete();
      const agents = await trx('agents').where({ org_id: orgId }).delete();
      const orgs = await trx('organizations').where({ org_id: orgId }).delete();
      return orgs === 0 ? undefined : { apps, agents };
    });
  }

  /** Whether the agent was there (false: deleted with its organization meanwhile). */
  async replaceAllowlist(agent: { id: string; orgId: string }, appIds: string[] | null): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      if (!(await holdOwner(trx, 'agent', agent.id, agent.orgId))) return false;
      await trx('agent_allowlist').where({ agent_id: agent.id }).delete();
      if (appIds?.length) await trx('agent_allowlist').insert(appIds.map((app_id) => ({ agent_id: agent.id, app_id })));
      await trx('agents')
        .where({ agent_id: agent.id })
        .update({ allowlist_enabled: appIds !== null });
      return true;
    });
  }
}

function tokenRow(t: TokenRecord) {
  return {
    hash: t.hash.toString('hex'),
    kind: t.kind,
    owner_id: t.owner_id,
    created_at: t.created_at,
    expires_at: t.expires_at,
  };
}
