// Provisioning through this implementation's admin API (/admin/v1, spec/openapi.yaml): for our bridge, and any
// bridge that offers the same API. Only the fields the suite uses are required of the answers.
import {
  validateProvisionedAgent,
  validateProvisionedApp,
  validateProvisionedOrg,
  type ClientKind,
  type FixtureSet,
  type ProvisionCreated,
  type ProvisionedSession,
  type Validator,
} from '../../generated/index.js';
import { describeErrors } from '../../generated/index.js';
import type { Target } from '../target.js';
import { NotSupported, ProvisionError, type Provisioner } from './provisioner.js';

export class AdminApiProvisioner implements Provisioner {
  readonly description: string;
  readonly createsRegistrations = true;

  constructor(
    private readonly target: Target,
    private readonly adminUrl: string,
    private readonly token: string,
  ) {
    this.description = `admin API at ${adminUrl}/admin/v1`;
  }

  private async call<T>(method: string, path: string, body?: unknown, validate?: Validator<T>): Promise<T> {
    const answer = await this.target.call(method, `${this.adminUrl}/admin/v1${path}`, this.token, body);
    if (answer.status >= 300)
      throw new ProvisionError(
        `${method} /admin/v1${path} answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`,
      );
    if (validate && !validate(answer.body)) {
      throw new ProvisionError(
        `${method} /admin/v1${path} answered a body the suite cannot use (${describeErrors(validate.errors)}): ${JSON.stringify(answer.body).slice(0, 300)}`,
      );
    }
    return answer.body as T;
  }

  async check(): Promise<void> {
    const answer = await this.target.call('GET', `${this.adminUrl}/admin/v1/organizations`, this.token);
    if (answer.status === 401 || answer.status === 403)
      throw new ProvisionError(
        `the admin token was refused (HTTP ${answer.status} ${JSON.stringify(answer.body).slice(0, 120)})`,
      );
    if (answer.status === 404)
      throw new ProvisionError(
        `no admin API there (HTTP 404 ${JSON.stringify(answer.body).slice(0, 120)}); our bridge serves it when started with ADMIN_TOKEN, other bridges: use --provision or --fixtures`,
      );
    if (answer.status >= 300) throw new ProvisionError(`GET /admin/v1/organizations answered HTTP ${answer.status}`);
  }

  async create(f: FixtureSet, scenarioId: string): Promise<ProvisionCreated> {
    const created: ProvisionCreated = { orgs: {}, apps: {}, agents: {} };
    for (const org of f.orgs)
      created.orgs[org] = await this.call(
        'POST',
        '/organizations',
        { name: `conformance ${scenarioId} ${org}` },
        validateProvisionedOrg,
      );
    const orgId = (name: string) => {
      const org = created.orgs[name];
      if (!org) throw new ProvisionError(`fixture organization ${name} is not in fixtures.orgs`);
      return org.org_id;
    };
    for (const [name, org] of Object.entries(f.apps)) {
      created.apps[name] = await this.call(
        'POST',
        `/organizations/${orgId(org)}/apps`,
        { name: `${scenarioId} ${name}` },
        validateProvisionedApp,
      );
    }
    for (const [name, a] of Object.entries(f.agents)) {
      const body = {
        name: a.name ?? `${scenarioId} ${name}`,
        ...(a.description !== undefined ? { description: a.description } : {}),
        ...(a.ttl_days ? { ttl_days: a.ttl_days } : {}),
      };
      const agent = await this.call('POST', `/organizations/${orgId(a.org)}/agents`, body, validateProvisionedAgent);
      created.agents[name] = agent;
      if (a.allowlist)
        await this.setAllowlist(
          agent.agent_id,
          a.allowlist.map((app) => created.apps[app]!.app_id),
        );
    }
    return created;
  }

  async rotate(kind: ClientKind, id: string): Promise<string> {
    const answer = await this.call<{ token: string }>('POST', `/${kind}s/${id}/rotate-token`);
    if (typeof answer?.token !== 'string') throw new ProvisionError(`rotate-token of ${kind} ${id} answered no token`);
    return answer.token;
  }

  async deactivate(kind: ClientKind, id: string): Promise<void> {
    await this.call('POST', `/${kind}s/${id}/deactivate`);
  }

  async setAllowlist(agentId: string, appIds: string[] | null): Promise<void> {
    await this.call('PUT', `/agents/${agentId}/allowlist`, { app_ids: appIds });
  }

  async advanceClock(ms: number): Promise<void> {
    const answer = await this.target.call('POST', `${this.adminUrl}/admin/v1/test/clock`, this.token, {
      advance_ms: ms,
    });
    if (answer.status === 404)
      throw new NotSupported(
        'advance_clock',
        'the target has no test clock (our bridge: start it with BRIDGE_TEST_CLOCK=1)',
      );
    if (answer.status >= 300)
      throw new ProvisionError(
        `POST /admin/v1/test/clock answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`,
      );
  }

  /** Every page of the agent's sessions (a bridge that does not page answers them all in the first). */
  async listSessions(agentId: string): Promise<ProvisionedSession[]> {
    const sessions: ProvisionedSession[] = [];
    for (let after: string | null | undefined; ;) {
      const cursor = after ? `&after=${encodeURIComponent(after)}` : '';
      const page = await this.call<{ sessions: ProvisionedSession[]; next_after?: string | null }>(
        'GET',
        `/sessions?agent_id=${encodeURIComponent(agentId)}&limit=500${cursor}`,
      );
      sessions.push(...page.sessions);
      after = page.next_after;
      if (!after) return sessions;
    }
  }

  async cleanup(orgIds: string[]): Promise<void> {
    for (const id of orgIds) await this.call('DELETE', `/organizations/${id}`);
  }
}
