// Registration and listing of organizations, apps and agents (the admin API's logic, without HTTP): writes go to
// the database first, then into the in-memory directory the bridge reads.
import type {
  Agent,
  AgentCreate,
  AgentCreated,
  AgentDirectory,
  AgentDirectoryEntry,
  AgentList,
  AgentUpdate,
  AllowlistUpdate,
  App,
  AppCreate,
  AppCreated,
  AppList,
  AppUpdate,
  ClientKind,
  Organization,
  OrganizationCreate,
  OrganizationDeleted,
  OrganizationList,
  OrganizationUpdate,
} from '../../generated/index.js';
import { LIMITS } from '../../generated/index.js';
import type { RevokeCause } from '../../generated/index.js';
import type { Clock } from '../shared/clock.js';
import {
  hashToken,
  TOKEN_PREFIX,
  type AgentRecord,
  type AppRecord,
  type Directory,
  type OrgRecord,
  type TokenRecord,
} from '../core/directory.js';
import { fitList } from '../core/fitted-list.js';
import { registrationId, tokenSecret } from '../core/ids.js';
import { byCodeUnits, pageAfter, type KeyPage } from '../shared/paging.js';
import { iso } from '../shared/time.js';
import type { RegistryStore } from '../store/registry.js';
import { problem, type Problem } from './problem.js';

/** A directory page around its list: `{"agents":` and `,"next_after":null}`. */
const DIRECTORY_FRAME = JSON.stringify({ agents: [], next_after: null } satisfies AgentDirectory).replace('[]', '');
/** What a cursor costs over `null`: an agent_id at its longest, quoted. */
const NEXT_AFTER_COST = LIMITS.idMaxChars + '""'.length - 'null'.length;

/** What registration changes mean for live connections. */
export interface LiveEffects {
  isAgentOnline(agentId: string): boolean;
  /** The same, asked of the record where this node's picture may lag behind another node's (O14). */
  locateAgent(agentId: string): Promise<boolean> | boolean;
  isAppOnline(appId: string): boolean;
  /** Closes the token's connections when its grace ends. */
  scheduleExpiry(token: TokenRecord): void;
  /** Closes the owner's connections (TOKEN_REVOKED) and ends an agent's events. */
  revoke(kind: ClientKind, id: string, cause: RevokeCause): void;
  /**
   * Forgets the live sessions of these apps and agents. Their rows were deleted with the organization, but a
   * session opened just before may still wait in the event log's write queue and would be written back.
   */
  dropSessions(ownerIds: ReadonlySet<string>): void;
  /**
   * Called after every change of the registrations, once this node has applied it; resolves when every node has
   * (a bridge of several nodes, O14), so that a client acting on the admin API's answer finds it on any node.
   */
  changed(): Promise<void>;
}

/** One page of a listing: `q` keeps the records whose id or name contains it, whatever the case (D11). */
export interface ListQuery {
  q?: string | undefined;
  after?: string | undefined;
  limit: number;
}

/** A change as made: the record after it, and the values the changed fields had before (for the audit trail). */
export interface Updated<T, F> {
  view: T;
  previous: Partial<F>;
}

export class Registry {
  constructor(
    private readonly store: RegistryStore,
    private readonly directory: Directory,
    private readonly clock: Clock,
    private readonly live: LiveEffects,
  ) {}

  organizations(query: ListQuery): OrganizationList {
    const page = listed(this.directory.orgs.values(), (o) => o.org_id, query);
    return { organizations: page.items.map(orgView), next_after: page.next_after };
  }

  /** One organization, as its list shows it. */
  organization(orgId: string): Organization {
    return orgView(this.org(orgId));
  }

  /** One app, deactivated ones included, as its organization's list shows it. */
  app(appId: string): App {
    const app = this.directory.apps.get(appId);
    if (!app) throw problem('NOT_FOUND', 'owner', { owner: ownerName('app', appId) });
    return this.appView(app);
  }

  /** One agent, deactivated ones included, as its organization's list shows it. */
  agent(agentId: string): Agent {
    const agent = this.directory.agents.get(agentId);
    if (!agent) throw problem('NOT_FOUND', 'owner', { owner: ownerName('agent', agentId) });
    return this.agentView(agent);
  }

  async createOrganization(body: OrganizationCreate): Promise<Organization> {
    const org: OrgRecord = { org_id: registrationId(body.name), name: body.name, created_at: this.clock.now() };
    await this.store.insertOrg(org);
    this.directory.addOrg(org);
    await this.live.changed();
    return orgView(org);
  }

  async updateOrganization(
    orgId: string,
    body: OrganizationUpdate,
  ): Promise<Updated<Organization, OrganizationUpdate>> {
    const org = this.org(orgId);
    const previous = { name: org.name };
    if (!(await this.store.updateOrg(orgId, body))) throw orgNotFound(orgId); // deleted meanwhile
    Object.assign(org, body);
    await this.live.changed();
    return { view: orgView(org), previous };
  }

  /**
   * Removes the organization with its apps and agents for good (H6). The database goes first, in one transaction.
   * Then, in one synchronous step so that no frame is handled in between, the records leave the directory (their
   * tokens then get UNAUTHORIZED, their ids AGENT_NOT_FOUND) and each app and agent is retired exactly as
   * deactivation retires it.
   */
  async deleteOrganization(orgId: string): Promise<OrganizationDeleted> {
    this.org(orgId);
    const removed = await this.store.deleteOrg(orgId);
    if (!removed) throw orgNotFound(orgId); // a concurrent delete of the same organization won
    const { apps, agents } = this.directory.removeOrg(orgId);
    // Agents first: their events in flight end with AGENT_OFFLINE while the apps' connections can still carry it.
    for (const agent of agents) this.retire('agent', agent.agent_id, agent, 'deleted with its organization');
    for (const app of apps) this.retire('app', app.app_id, app, 'deleted with its organization');
    this.live.dropSessions(new Set([...agents.map((a) => a.agent_id), ...apps.map((a) => a.app_id)]));
    await this.live.changed();
    return { org_id: orgId, ...removed };
  }

  apps(orgId: string, query: ListQuery): AppList {
    this.org(orgId);
    const ofOrg = [...this.directory.apps.values()].filter((a) => a.org_id === orgId);
    const page = listed(ofOrg, (a) => a.app_id, query);
    return { apps: page.items.map((a) => this.appView(a)), next_after: page.next_after };
  }

  async createApp(orgId: string, body: AppCreate): Promise<AppCreated> {
    this.org(orgId);
    const app: AppRecord = {
      app_id: registrationId(body.name),
      org_id: orgId,
      name: body.name,
      active: true,
      created_at: this.clock.now(),
    };
    const { token, record } = this.issueToken('app', app.app_id);
    // Deleted meanwhile, before the insert (it found no organization) or after it (the app went with it): either
    // way the organization is gone, and the answer says so (H6).
    if (!(await this.store.insertApp(app, record)) || !this.directory.orgs.has(orgId)) throw orgNotFound(orgId);
    this.directory.addApp(app);
    this.directory.addToken(record);
    await this.live.changed();
    return { ...this.appView(app), token };
  }

  /** A deactivated app can be renamed too: its id and tokens stay as they are (T5). */
  async updateApp(appId: string, body: AppUpdate): Promise<Updated<App, AppUpdate>> {
    const app = this.directory.apps.get(appId);
    if (!app) throw problem('NOT_FOUND', 'owner', { owner: ownerName('app', appId) });
    const previous = { name: app.name };
    if (!(await this.store.updateApp(appId, body)))
      throw problem('NOT_FOUND', 'owner', { owner: ownerName('app', appId) });
    Object.assign(app, body);
    await this.live.changed();
    return { view: this.appView(app), previous };
  }

  agents(orgId: string, query: ListQuery): AgentList {
    this.org(orgId);
    const ofOrg = [...this.directory.agents.values()].filter((a) => a.org_id === orgId);
    const page = listed(ofOrg, (a) => a.agent_id, query);
    return { agents: page.items.map((a) => this.agentView(a)), next_after: page.next_after };
  }

  async createAgent(orgId: string, body: AgentCreate): Promise<AgentCreated> {
    this.org(orgId);
    const agent: AgentRecord = {
      agent_id: registrationId(body.name),
      org_id: orgId,
      name: body.name,
      description: body.description ?? '',
      ttl_days: body.ttl_days ?? LIMITS.sessionTtlDefaultDays,
      allowlist: null,
      active: true,
      created_at: this.clock.now(),
    };
    const { token, record } = this.issueToken('agent', agent.agent_id);
    if (!(await this.store.insertAgent(agent, record)) || !this.directory.orgs.has(orgId)) throw orgNotFound(orgId); // as createApp
    this.directory.addAgent(agent);
    this.directory.addToken(record);
    await this.live.changed();
    return { ...this.agentView(agent), token };
  }

  /**
   * Changes the fields given. The record is changed in place, so the directory answers with the new name and
   * description at once; `ttl_days` is read when a session is created, so live sessions keep their expiry (T5).
   */
  async updateAgent(agentId: string, body: AgentUpdate): Promise<Updated<Agent, AgentUpdate>> {
    const agent = this.directory.agents.get(agentId);
    if (!agent) throw problem('NOT_FOUND', 'owner', { owner: ownerName('agent', agentId) });
    const previous: Partial<AgentUpdate> = {};
    for (const field of ['name', 'description', 'ttl_days'] as const)
      if (field in body) Object.assign(previous, { [field]: agent[field] });
    if (!(await this.store.updateAgent(agentId, body)))
      throw problem('NOT_FOUND', 'owner', { owner: ownerName('agent', agentId) });
    Object.assign(agent, body);
    await this.live.changed();
    return { view: this.agentView(agent), previous };
  }

  async setAllowlist(agentId: string, body: AllowlistUpdate): Promise<Agent> {
    const agent = this.directory.agents.get(agentId);
    if (!agent) throw problem('NOT_FOUND', 'owner', { owner: `Agent ${agentId}` });
    const appIds = body.app_ids === null ? null : [...new Set(body.app_ids)].sort();
    const foreign = (appIds ?? []).filter((id) => this.directory.apps.get(id)?.org_id !== agent.org_id);
    if (foreign.length) {
      throw problem('INVALID_REQUEST', 'foreign_apps', { org_id: agent.org_id, app_ids: foreign.join(', ') });
    }
    const there = await this.store.replaceAllowlist({ id: agentId, orgId: agent.org_id }, appIds);
    if (!there || !this.directory.agents.has(agentId))
      throw problem('NOT_FOUND', 'owner', { owner: ownerName('agent', agentId) }); // deleted meanwhile
    this.directory.setAllowlist(agentId, appIds);
    await this.live.changed();
    return this.agentView(agent);
  }

  /**
   * A new token at once; the owner's current token keeps working for the rotation grace, then its connections
   * close. A token already in its grace keeps its own end (H5).
   */
  async rotateToken(kind: ClientKind, id: string): Promise<{ token: string; previous_token_expires_at: string }> {
    const owner = this.ownerOf(kind, id);
    if (!owner) throw problem('NOT_FOUND', 'owner', { owner: ownerName(kind, id) });
    if (!owner.active) throw problem('INVALID_REQUEST', 'deactivated', { owner: ownerName(kind, id) });
    const graceEndsAt = this.clock.now() + LIMITS.rotationGraceMs;
    const { token, record } = this.issueToken(kind, id);
    const there = await this.store.rotate({ kind, id, orgId: owner.org_id }, graceEndsAt, record);
    if (!there || !this.ownerOf(kind, id)) throw problem('NOT_FOUND', 'owner', { owner: ownerName(kind, id) }); // deleted meanwhile
    for (const previous of this.directory.tokensOf(id)) {
      if (previous.expires_at !== null) continue;
      previous.expires_at = graceEndsAt;
      this.live.scheduleExpiry(previous);
    }
    this.directory.addToken(record);
    await this.live.changed();
    return { token, previous_token_expires_at: iso(graceEndsAt) };
  }

  async deactivateApp(id: string): Promise<App> {
    return this.appView(await this.deactivate('app', id, this.directory.apps.get(id)));
  }

  async deactivateAgent(id: string): Promise<Agent> {
    return this.agentView(await this.deactivate('agent', id, this.directory.agents.get(id)));
  }

  /** Deactivation is final: live connections close, tokens then get TOKEN_REVOKED. Idempotent. */
  private async deactivate<T extends { active: boolean }>(
    kind: ClientKind,
    id: string,
    owner: T | undefined,
  ): Promise<T> {
    if (!owner) throw problem('NOT_FOUND', 'owner', { owner: ownerName(kind, id) });
    if (owner.active) {
      if (!(await this.store.deactivate(kind, id))) throw problem('NOT_FOUND', 'owner', { owner: ownerName(kind, id) }); // deleted meanwhile
      this.retire(kind, id, owner, 'deactivated');
      await this.live.changed();
    }
    return owner;
  }

  /**
   * The live side of deactivation, shared with deletion: the record stops authenticating (a principal already
   * holding it sees it inactive), its connections close with TOKEN_REVOKED and an agent's events end at once.
   */
  private retire(kind: ClientKind, id: string, owner: { active: boolean }, cause: RevokeCause): void {
    owner.active = false;
    this.live.revoke(kind, id, cause);
  }

  /**
   * A page of the HTTP directory (§2.4, H2) as the app sees it: only its own organization's, at most `limit` agents
   * after `after` and at most frameMaxBytes of JSON, whatever the organization holds. Agents are looked up as online
   * only for the page (on several nodes, a round trip each).
   */
  async directoryFor(
    app: AppRecord,
    orgId: string,
    page: { after?: string | undefined; limit: number },
  ): Promise<AgentDirectory> {
    if (app.org_id !== orgId) throw problem('FORBIDDEN', 'other_organization');
    const { after } = page;
    const agents = this.directory.agentsOf(orgId).filter((a) => after === undefined || a.agent_id > after);
    // Measured with the longer status: the page's JSON is at most what was measured.
    const entries = agents.map((a): AgentDirectoryEntry => ({
      id: a.agent_id,
      name: a.name,
      description: a.description,
      status: 'offline',
      allowlisted: this.directory.mayUse(app, a),
    }));
    const { items, complete } = fitList(
      entries,
      LIMITS.frameMaxBytes - DIRECTORY_FRAME.length,
      NEXT_AFTER_COST,
      page.limit,
    );
    const listed = entries.slice(0, items.length);
    const online = await Promise.all(listed.map(async (e) => this.live.locateAgent(e.id)));
    for (const [i, entry] of listed.entries()) if (online[i]) entry.status = 'online';
    return { agents: listed, next_after: complete ? null : (listed[listed.length - 1]?.id ?? null) };
  }

  private ownerOf(kind: ClientKind, id: string): AppRecord | AgentRecord | undefined {
    return kind === 'app' ? this.directory.apps.get(id) : this.directory.agents.get(id);
  }

  private org(orgId: string): OrgRecord {
    const org = this.directory.orgs.get(orgId);
    if (!org) throw orgNotFound(orgId);
    return org;
  }

  private issueToken(kind: ClientKind, ownerId: string): { token: string; record: TokenRecord } {
    const token = `${TOKEN_PREFIX[kind]}${ownerId}_${tokenSecret()}`;
    return {
      token,
      record: { hash: hashToken(token), kind, owner_id: ownerId, created_at: this.clock.now(), expires_at: null },
    };
  }

  private appView(a: AppRecord): App {
    return { ...a, online: this.live.isAppOnline(a.app_id), created_at: iso(a.created_at) };
  }

  private agentView(a: AgentRecord): Agent {
    return {
      ...a,
      allowlist: a.allowlist && [...a.allowlist],
      online: this.live.isAgentOnline(a.agent_id),
      created_at: iso(a.created_at),
    };
  }
}

/** The records matching `query.q`, sorted by id, one page of them. */
function listed<R extends { name: string }>(records: Iterable<R>, id: (r: R) => string, query: ListQuery): KeyPage<R> {
  const q = query.q?.toLowerCase();
  const matching = [...records].filter(
    (r) => q === undefined || id(r).toLowerCase().includes(q) || r.name.toLowerCase().includes(q),
  );
  return pageAfter(
    matching.sort((a, b) => byCodeUnits(id(a), id(b))),
    id,
    query.after,
    query.limit,
  );
}

function orgNotFound(orgId: string): Problem {
  return problem('NOT_FOUND', 'organization', { org_id: orgId });
}

const ownerName = (kind: ClientKind, id: string) => `${kind === 'app' ? 'App' : 'Agent'} ${id}`;

function orgView(o: OrgRecord): Organization {
  return { ...o, created_at: iso(o.created_at) };
}
