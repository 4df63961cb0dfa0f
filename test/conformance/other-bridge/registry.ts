// Who exists: organisations, clients (apps and agents), their tokens, allowlists and sessions. Plain maps in
// memory; a Map keeps insertion order, which is the registration order `discover` and the directory list in.
import { randomBytes } from 'node:crypto';
import type { Clock } from './clock.js';

const ROTATION_GRACE_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export type Kind = 'app' | 'agent';

export interface Client {
  ref: string;
  org: string;
  kind: Kind;
  label: string;
  about: string;
  ttlDays: number;
  /** App refs allowed to use this agent; null = every app of the organisation. */
  allow: string[] | null;
  disabled: boolean;
}

export interface Session {
  key: string;
  agent: string;
  app: string;
  thread: string;
  born: number;
  dies: number;
}

export type Auth = { ok: true; client: Client } | { ok: false; code: 'UNAUTHORIZED' | 'TOKEN_REVOKED' };

// Hex only: ids and secrets never contain `_`, so a token's parts stay unambiguous to anyone who splits it.
const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

export class Registry {
  readonly orgs = new Map<string, string>();
  readonly clients = new Map<string, Client>();
  /** Full token -> owner; retiredAt is set when the token is rotated out. */
  readonly #tokens = new Map<string, { ref: string; retiredAt?: number }>();
  readonly #sessions = new Map<string, Session>();

  constructor(
    private readonly clock: Clock,
    private readonly oldTokensForever: boolean,
  ) {}

  addOrg(label: string): string {
    const ref = `org-${hex(5)}`;
    this.orgs.set(ref, label);
    return ref;
  }

  addClient(fields: Omit<Client, 'ref' | 'disabled'>): { client: Client; token: string } {
    const client: Client = { ...fields, ref: `${fields.kind}-${hex(5)}`, disabled: false };
    this.clients.set(client.ref, client);
    return { client, token: this.#issue(client) };
  }

  /** Issues a new token; the current one keeps working for the grace hour (measured from now). */
  rotate(client: Client): string {
    for (const record of this.#tokens.values()) {
      if (record.ref === client.ref && record.retiredAt === undefined) record.retiredAt = this.clock.now();
    }
    return this.#issue(client);
  }

  authenticate(token: string | undefined): Auth {
    const record = token === undefined ? undefined : this.#tokens.get(token);
    const client = record && this.clients.get(record.ref);
    if (!record || !client) return { ok: false, code: 'UNAUTHORIZED' };
    if (client.disabled) return { ok: false, code: 'TOKEN_REVOKED' };
    const expired =
      record.retiredAt !== undefined &&
      !this.oldTokensForever &&
      this.clock.now() >= record.retiredAt + ROTATION_GRACE_MS;
    return expired ? { ok: false, code: 'UNAUTHORIZED' } : { ok: true, client };
  }

  mayUse(agent: Client, app: Client): boolean {
    return agent.allow === null || agent.allow.includes(app.ref);
  }

  /** Active agents of an organisation, in registration order. */
  agentsOf(org: string): Client[] {
    return [...this.clients.values()].filter((c) => c.kind === 'agent' && c.org === org && !c.disabled);
  }

  /** Called for each accepted event: creates the session, or slides its expiry if it is still alive. */
  touchSession(agent: Client, app: Client, thread: string): Session {
    const key = `svc:${agent.ref}:${app.ref}:${thread}`;
    const now = this.clock.now();
    const dies = now + agent.ttlDays * DAY_MS;
    const live = this.#sessions.get(key);
    if (live && now < live.dies) {
      live.dies = dies;
      return live;
    }
    const fresh = { key, agent: agent.ref, app: app.ref, thread, born: now, dies };
    this.#sessions.set(key, fresh);
    return fresh;
  }

  /** Live sessions of an agent; expired ones are deleted on the way. */
  sessionsOf(agentRef: string): Session[] {
    const now = this.clock.now();
    for (const [key, s] of this.#sessions) if (now >= s.dies) this.#sessions.delete(key);
    return [...this.#sessions.values()].filter((s) => s.agent === agentRef);
  }

  /** Removes an organisation with its clients, tokens and sessions; returns the clients removed. */
  dropOrg(org: string): Client[] {
    const gone = [...this.clients.values()].filter((c) => c.org === org);
    const refs = new Set(gone.map((c) => c.ref));
    for (const ref of refs) this.clients.delete(ref);
    for (const [token, record] of this.#tokens) if (refs.has(record.ref)) this.#tokens.delete(token);
    for (const [key, s] of this.#sessions) if (refs.has(s.agent) || refs.has(s.app)) this.#sessions.delete(key);
    this.orgs.delete(org);
    return gone;
  }

  #issue(client: Client): string {
    const token = `${client.kind === 'app' ? 'rlk' : 'rla'}_${client.ref}_${hex(24)}`;
    this.#tokens.set(token, { ref: client.ref });
    return token;
  }
}
