// The registered organizations, apps, agents and token hashes, held in memory so the per-event path never waits
// on the database. The store loads it at start and writes through it; the core only reads it.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Agent, AgentSummary, App, ClientKind, ErrorCode, Organization } from '../../generated/index.js';
import { validateAgentToken, validateAppToken } from '../../generated/index.js';
import { byCodeUnits } from '../shared/paging.js';
import type { EpochMs } from './records.js';

export type OrgRecord = EpochMs<Organization, 'created_at'>;
/** Without `online`: that is the live connections' state, added when the registration is shown. */
export type AppRecord = EpochMs<Omit<App, 'online'>, 'created_at'>;
export type AgentRecord = EpochMs<Omit<Agent, 'online'>, 'created_at'>;

export interface TokenRecord {
  hash: Buffer;
  kind: ClientKind;
  owner_id: string;
  created_at: number;
  /** When a rotated-out token stops working; null while it is the current token. */
  expires_at: number | null;
}

/** Who a connection authenticated as, and with which of its tokens (a rotated-out one is closed at its expiry). */
export type Principal = ({ kind: 'app'; app: AppRecord } | { kind: 'agent'; agent: AgentRecord }) & {
  token: TokenRecord;
};

export type AuthResult =
  { ok: true; principal: Principal } | { ok: false; code: Extract<ErrorCode, 'UNAUTHORIZED' | 'TOKEN_REVOKED'> };

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** How each kind's tokens start (`rlk_{app_id}_{secret}`, `rla_{agent_id}_{secret}`: the token schemas' patterns). */
export const TOKEN_PREFIX: Record<ClientKind, string> = { app: 'rlk_', agent: 'rla_' };

/** `rlk_{app_id}_{secret}` -> its kind and owner, or undefined when it is not a token of this protocol. */
export function parseToken(token: string): { kind: ClientKind; ownerId: string } | undefined {
  const kind = validateAppToken(token) ? 'app' : validateAgentToken(token) ? 'agent' : undefined;
  if (!kind) return undefined;
  return { kind, ownerId: token.split('_')[1]! };
}

export class Directory {
  readonly orgs = new Map<string, OrgRecord>();
  readonly apps = new Map<string, AppRecord>();
  readonly agents = new Map<string, AgentRecord>();
  private readonly tokens = new Map<string, TokenRecord[]>();

  addOrg(org: OrgRecord): void {
    this.orgs.set(org.org_id, org);
  }

  addApp(app: AppRecord): void {
    this.apps.set(app.app_id, app);
  }

  addAgent(agent: AgentRecord): void {
    this.agents.set(agent.agent_id, agent);
  }

  addToken(token: TokenRecord): void {
    const list = this.tokens.get(token.owner_id) ?? [];
    list.push(token);
    this.tokens.set(token.owner_id, list);
  }

  /** Every token of an owner, current and rotated out. */
  tokensOf(ownerId: string): TokenRecord[] {
    return this.tokens.get(ownerId) ?? [];
  }

  setAllowlist(agentId: string, appIds: string[] | null): void {
    const agent = this.agents.get(agentId);
    if (agent) agent.allowlist = appIds;
  }

  /**
   * Takes on what `fresh` holds (registrations reloaded from the database after another node changed them). A
   * record that stays is updated in place: the connections authenticated with it hold it and must see it change.
   */
  replaceContents(fresh: Directory): void {
    const update = <R extends object>(mine: Map<string, R>, theirs: Map<string, R>) => {
      for (const id of mine.keys()) if (!theirs.has(id)) mine.delete(id);
      for (const [id, record] of theirs) {
        const kept = mine.get(id);
        if (kept) Object.assign(kept, record);
        else mine.set(id, record);
      }
    };
    update(this.orgs, fresh.orgs);
    update(this.apps, fresh.apps);
    update(this.agents, fresh.agents);
    this.tokens.clear();
    for (const [owner, list] of fresh.tokens) this.tokens.set(owner, list);
  }

  /** Forgets an organization with its apps, agents and their tokens; returns the apps and agents it had. */
  removeOrg(orgId: string): { apps: AppRecord[]; agents: AgentRecord[] } {
    const apps = [...this.apps.values()].filter((a) => a.org_id === orgId);
    const agents = [...this.agents.values()].filter((a) => a.org_id === orgId);
    for (const { app_id } of apps) {
      this.apps.delete(app_id);
      this.removeTokens('app', app_id);
    }
    for (const { agent_id } of agents) {
      this.agents.delete(agent_id);
      this.removeTokens('agent', agent_id);
    }
    this.orgs.delete(orgId);
    return { apps, agents };
  }

  /** By kind too: the token map is keyed by owner id alone, and an app and an agent could share an id. */
  private removeTokens(kind: ClientKind, ownerId: string): void {
    const left = this.tokensOf(ownerId).filter((t) => t.kind !== kind);
    if (left.length) this.tokens.set(ownerId, left);
    else this.tokens.delete(ownerId);
  }

  /** Constant-time comparison against every hash of the token's owner; never reveals which part was wrong. */
  authenticate(token: string, now: number): AuthResult {
    const parsed = parseToken(token);
    if (!parsed) return { ok: false, code: 'UNAUTHORIZED' };
    const hash = hashToken(token);
    const match = (this.tokens.get(parsed.ownerId) ?? []).find(
      (t) => t.kind === parsed.kind && timingSafeEqual(t.hash, hash),
    );
    if (!match || (match.expires_at !== null && match.expires_at <= now)) return { ok: false, code: 'UNAUTHORIZED' };
    if (parsed.kind === 'app') {
      const app = this.apps.get(parsed.ownerId);
      if (!app) return { ok: false, code: 'UNAUTHORIZED' };
      return app.active
        ? { ok: true, principal: { kind: 'app', app, token: match } }
        : { ok: false, code: 'TOKEN_REVOKED' };
    }
    const agent = this.agents.get(parsed.ownerId);
    if (!agent) return { ok: false, code: 'UNAUTHORIZED' };
    return agent.active
      ? { ok: true, principal: { kind: 'agent', agent, token: match } }
      : { ok: false, code: 'TOKEN_REVOKED' };
  }

  /** An active agent of the app's organization, or undefined: other organizations' agents do not exist for it. */
  agentFor(app: AppRecord, agentId: string): AgentRecord | undefined {
    const agent = this.agents.get(agentId);
    return agent && agent.active && agent.org_id === app.org_id ? agent : undefined;
  }

  mayUse(app: AppRecord, agent: AgentRecord): boolean {
    return agent.allowlist === null || agent.allowlist.includes(app.app_id);
  }

  /**
   * Active agents of an organization, sorted by agent_id code unit by code unit: the order of the HTTP directory's
   * pages and their `after` cursor, which an app continues a cut `discover` answer with (W13, H2).
   */
  agentsOf(orgId: string): AgentRecord[] {
    return [...this.agents.values()]
      .filter((a) => a.org_id === orgId && a.active)
      .sort((a, b) => byCodeUnits(a.agent_id, b.agent_id));
  }

  /**
   * What `discover` lists (W13): the active agents of the app's organization that it may use, sorted by agent_id, as
   * summaries made one at a time (an answer stops at frameMaxBytes, long before a large organization's last).
   */
  *usableBy(app: AppRecord): Generator<AgentSummary> {
    for (const agent of this.agentsOf(app.org_id)) {
      if (this.mayUse(app, agent)) yield { agent_id: agent.agent_id, name: agent.name, description: agent.description };
    }
  }
}
