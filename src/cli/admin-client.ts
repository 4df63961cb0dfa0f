// A small typed client of the admin API (spec/openapi.yaml), for the CLI.
import type {
  Agent,
  AgentCreate,
  AgentCreated,
  AgentList,
  AgentUpdate,
  App,
  AppCreated,
  AppList,
  AgentTokenRotated,
  AppTokenRotated,
  AuditLog,
  ClosedConnection,
  EventLog,
  HttpError,
  Organization,
  OrganizationDeleted,
  OrganizationList,
  OrganizationLive,
  SessionList,
} from '../../generated/index.js';
import { ERRORS, validateErrorCode } from '../../generated/index.js';

/** Whether the same call may succeed later: the catalogue says for its codes; an unreachable bridge may come back. */
function retryable(status: number, code: string): boolean {
  return validateErrorCode(code) ? ERRORS[code].retry : status === 0 || status >= 500;
}

export class AdminApiError extends Error {
  readonly retry: boolean;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    const retry = retryable(status, code);
    super(`${code}: ${message}${retry ? ' (this may succeed if tried again later)' : ''}`);
    this.retry = retry;
  }
}

export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly adminToken: string | undefined,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: {
          ...(this.adminToken ? { authorization: `Bearer ${this.adminToken}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new AdminApiError(
        0,
        'UNREACHABLE',
        `cannot reach the bridge at ${this.baseUrl} (${(err as Error).cause ?? (err as Error).message}); is it running? Set --url or BRIDGE_URL.`,
      );
    }
    const text = await response.text();
    const json = text ? JSON.parse(text) : undefined;
    if (!response.ok) {
      const problem = json as Partial<HttpError> | undefined;
      throw new AdminApiError(response.status, problem?.code ?? `HTTP_${response.status}`, problem?.error ?? text);
    }
    return json as T;
  }

  organizations = (query: Query = {}) =>
    this.call<OrganizationList>('GET', `/admin/v1/organizations${queryString(query)}`);
  createOrganization = (name: string) => this.call<Organization>('POST', '/admin/v1/organizations', { name });
  renameOrganization = (orgId: string, name: string) =>
    this.call<Organization>('PATCH', `/admin/v1/organizations/${encodeURIComponent(orgId)}`, { name });
  deleteOrganization = (orgId: string) =>
    this.call<OrganizationDeleted>('DELETE', `/admin/v1/organizations/${encodeURIComponent(orgId)}`);
  apps = (orgId: string, query: Query = {}) =>
    this.call<AppList>('GET', `/admin/v1/organizations/${encodeURIComponent(orgId)}/apps${queryString(query)}`);
  renameApp = (appId: string, name: string) =>
    this.call<App>('PATCH', `/admin/v1/apps/${encodeURIComponent(appId)}`, { name });
  createApp = (orgId: string, name: string) =>
    this.call<AppCreated>('POST', `/admin/v1/organizations/${encodeURIComponent(orgId)}/apps`, { name });
  agents = (orgId: string, query: Query = {}) =>
    this.call<AgentList>('GET', `/admin/v1/organizations/${encodeURIComponent(orgId)}/agents${queryString(query)}`);
  updateAgent = (agentId: string, body: AgentUpdate) =>
    this.call<Agent>('PATCH', `/admin/v1/agents/${encodeURIComponent(agentId)}`, body);
  createAgent = (orgId: string, body: AgentCreate) =>
    this.call<AgentCreated>('POST', `/admin/v1/organizations/${encodeURIComponent(orgId)}/agents`, body);
  rotateAppToken = (appId: string) =>
    this.call<AppTokenRotated>('POST', `/admin/v1/apps/${encodeURIComponent(appId)}/rotate-token`);
  rotateAgentToken = (agentId: string) =>
    this.call<AgentTokenRotated>('POST', `/admin/v1/agents/${encodeURIComponent(agentId)}/rotate-token`);
  deactivateApp = (appId: string) => this.call<App>('POST', `/admin/v1/apps/${encodeURIComponent(appId)}/deactivate`);
  deactivateAgent = (agentId: string) =>
    this.call<Agent>('POST', `/admin/v1/agents/${encodeURIComponent(agentId)}/deactivate`);
  organizationLive = (orgId: string) =>
    this.call<OrganizationLive>('GET', `/admin/v1/organizations/${encodeURIComponent(orgId)}/live`);
  disconnect = (connectionId: string) =>
    this.call<ClosedConnection>('DELETE', `/admin/v1/connections/${encodeURIComponent(connectionId)}`);
  events = (query: Query) => this.call<EventLog>('GET', `/admin/v1/events${queryString(query)}`);
  sessions = (query: Query) => this.call<SessionList>('GET', `/admin/v1/sessions${queryString(query)}`);
  audit = (query: Query) => this.call<AuditLog>('GET', `/admin/v1/audit${queryString(query)}`);
  setAllowlist = (agentId: string, appIds: App['app_id'][] | null) =>
    this.call<Agent>('PUT', `/admin/v1/agents/${encodeURIComponent(agentId)}/allowlist`, { app_ids: appIds });
}

/** Query parameters; the undefined ones are left out. */
export type Query = Record<string, string | undefined>;

function queryString(query: Query): string {
  const params = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
  const text = params.toString();
  return text ? `?${text}` : '';
}
