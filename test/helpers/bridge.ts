// A real bridge on port 0 for a test: in-memory SQLite, a frozen clock the test moves, an admin token, and
// helpers to provision organizations, apps and agents and to connect clients.
import {
  LIMITS,
  validators,
  type AgentCreated,
  type ClientKind,
  type AppCreated,
  type Organization,
} from '../../generated/index.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { loadConfig, type Config } from '../../src/config.js';
import { startServer, type RunningBridge, type StartOptions } from '../../src/server.js';
import { httpJson } from './http.js';
import { TestClient, type AgentClient, type AppClient, type Carrier } from './ws-client.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestBridge extends RunningBridge {
  clock: AdjustableClock;
  /** A raw admin or HTTP call; the body is parsed, and checked against `schema` when given. */
  http(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string | null; schema?: keyof typeof validators },
  ): Promise<{ status: number; body: any }>;
  org(name?: string): Promise<Organization>;
  app(orgId: string, name?: string): Promise<AppCreated>;
  agent(orgId: string, name?: string, extra?: object): Promise<AgentCreated>;
  /** An organization with one app and one agent, the agent connected. */
  pair(): Promise<{
    org: Organization;
    app: AppCreated;
    agent: AgentCreated;
    appClient: AppClient;
    agentClient: AgentClient;
  }>;
  /**
   * Moves the frozen clock forward by `ms` the way real time passes for live clients: in heartbeat periods, each
   * client pinging in between (so no idle close), proving that nothing else arrived meanwhile.
   */
  advanceWithHeartbeats(ms: number, clients: TestClient<any>[]): Promise<void>;
  /** Waits until the bridge has processed an agent's connection or disconnection (it travels over a socket). */
  untilAgentOnline(agentId: string, online: boolean): Promise<void>;
  connectApp(token: string | undefined, carrier?: Carrier): Promise<AppClient>;
  /** An app connection opened with ?resume=1 (R1). */
  connectResumableApp(token: string): Promise<AppClient>;
  connectAgent(token: string | undefined, carrier?: Carrier): Promise<AgentClient>;
}

const open: TestBridge[] = [];
const clients: TestClient<any>[] = [];

/** The configuration tests run with: port 0, in-memory SQLite, an admin token, quiet logs, no rate limit. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({}), // every other setting at its default, as `npm start` has it
    port: 0,
    host: '127.0.0.1',
    databaseUrl: 'sqlite::memory:',
    adminToken: ADMIN_TOKEN,
    logLevel: 'silent',
    rateLimitPerSecond: 0, // tests send bursts on a frozen clock; the rate-limit tests turn it on
    rateLimitBurst: 0,
    shutdownTimeoutMs: 5_000,
    ...overrides,
  };
}

/** Closes the clients and waits until the bridge has let go of them, so the clock can jump by days. */
export async function disconnect(bridge: RunningBridge, ...clients: TestClient<any>[]): Promise<void> {
  for (const c of clients) c.close();
  for (const c of clients) await c.waitForClose();
  for (let i = 0; i < 200; i++) {
    const { apps, agents } = bridge.bridge.stats();
    if (apps === 0 && agents === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`the bridge still holds connections: ${JSON.stringify(bridge.bridge.stats())}`);
}

export async function startTestBridge(
  overrides: Partial<Config> = {},
  options: Pick<StartOptions, 'agentReconnectGraceMs' | 'log' | 'eventLogRetryMs'> = {},
): Promise<TestBridge> {
  const clock = new AdjustableClock({ frozen: true, start: Date.parse('2026-11-22T12:00:00.000Z') });
  const config = testConfig(overrides);
  const running = await startServer(config, { clock, ...options });

  const http: TestBridge['http'] = (method, path, { token = ADMIN_TOKEN, ...rest } = {}) =>
    httpJson(running.url, method, path, { token, ...rest });

  const created = async (path: string, body: object, schema: keyof typeof validators) => {
    const res = await http('POST', path, { body, schema });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  const connect = async (kind: ClientKind, token: string | undefined, carrier: Carrier = 'header', resume = false) => {
    const client = await TestClient.connect(running.url, kind, token, carrier, token, { resume });
    clients.push(client);
    return client;
  };

  const bridge: TestBridge = {
    ...running,
    clock,
    http,
    org: (name = 'Test Org') => created('/admin/v1/organizations', { name }, 'Organization'),
    app: (orgId, name = 'Test App') => created(`/admin/v1/organizations/${orgId}/apps`, { name }, 'AppCreated'),
    agent: (orgId, name = 'Test Agent', extra = {}) =>
      created(`/admin/v1/organizations/${orgId}/agents`, { name, ...extra }, 'AgentCreated'),
    async advanceWithHeartbeats(ms, live) {
      for (let left = ms; left > 0;) {
        const step = Math.min(left, LIMITS.heartbeatIntervalMs);
        clock.advance(step);
        left -= step;
        for (const client of live) await client.expectNothingBeforePong();
      }
    },
    async untilAgentOnline(agentId, online) {
      const orgId = running.directory.agents.get(agentId)?.org_id ?? '';
      for (let i = 0; i < 200; i++) {
        if (
          running.registry
            .agents(orgId, { q: agentId, limit: Number.MAX_SAFE_INTEGER })
            .agents.find((a) => a.agent_id === agentId)?.online === online
        )
          return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      throw new Error(`agent ${agentId} never became ${online ? 'online' : 'offline'}`);
    },
    connectApp: (token, carrier) => connect('app', token, carrier) as Promise<AppClient>,
    connectAgent: (token, carrier) => connect('agent', token, carrier) as Promise<AgentClient>,
    connectResumableApp: (token) => connect('app', token, 'header', true) as Promise<AppClient>,
    async pair() {
      const org = await bridge.org();
      const app = await bridge.app(org.org_id);
      const agent = await bridge.agent(org.org_id);
      const agentClient = await bridge.connectAgent(agent.token);
      const appClient = await bridge.connectApp(app.token);
      return { org, app, agent, appClient, agentClient };
    },
  };
  open.push(bridge);
  return bridge;
}

/** Closes every client and bridge a test started; mocha's root hook calls it after each test. */
export async function stopAll(): Promise<void> {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(open.splice(0).map((b) => b.close()));
}
