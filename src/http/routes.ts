// The HTTP routes of spec/openapi.yaml: health, the agent directory, the admin API and the test clock.
import { Router } from '@koa/router';
import type { Context } from 'koa';
import {
  validateAgentCreate,
  validateAgentUpdate,
  validateAllowlistUpdate,
  validateAppCreate,
  validateAppUpdate,
  validateAgentId,
  validateAppId,
  validateClockAdvance,
  validateErrorCode,
  validateEventId,
  validateEventStatus,
  validateOrganizationCreate,
  validateOrganizationUpdate,
  validateOrgId,
  validateSessionKey,
  type Agent,
  type AgentDirectory,
  type AgentList,
  type App,
  type AppList,
  type AuditLog,
  type ClockNow,
  type Health,
  type Readiness,
  type SessionList,
  type Organization,
  type OrganizationList,
  QUERY_PARAMETERS,
  VERSION,
  type ErrorCode,
} from '../../generated/index.js';
import type { AuditTrail } from '../admin/audit.js';
import type { ListQuery, Registry } from '../admin/registry.js';
import { Problem, problem } from '../admin/problem.js';
import type { AdjustableClock, Clock } from '../shared/clock.js';
import { iso } from '../shared/time.js';
import type { Directory } from '../core/directory.js';
import { pageOf, type SessionRecord } from '../core/sessions.js';
import type { EventLogReader } from '../store/event-log.js';
import type { Registry as PromRegistry } from 'prom-client';
import { actorOf, appFromBearer } from './auth.js';
import { body, integerParam, pageLimit, param, timeParam, withinLength } from './input.js';

export interface RouteDeps {
  registry: Registry;
  /** Every admin change is recorded here before the API answers (D10); `actorOf(ctx)` says who made it. */
  audit: AuditTrail;
  events: EventLogReader;
  /** Commits what the event log has queued (on several nodes, every node's), so that a listing reads its writes. */
  flushEventLog(): Promise<void>;
  /** The live sessions matching `filter`, sorted by key (on several nodes, every node's: O14). */
  liveSessions(now: number, filter: { agent_id?: string; app_id?: string }): Promise<SessionRecord[]>;
  /** Undefined when /metrics is served on its own port instead (METRICS_PORT, O12). */
  metrics: PromRegistry | undefined;
  /** Why the bridge takes no new traffic now (undefined: it does); throws when the database does not answer. */
  ready(): Promise<NotReady | undefined>;
  directory: Directory;
  clock: Clock;
  adminToken: string | undefined;
  /** Present only in test-clock mode (BRIDGE_TEST_CLOCK=1). */
  testClock: AdjustableClock | undefined;
  /** After the test clock moved to `now`: resolves once every node's clock has (several nodes, O14). */
  clockMoved?: (now: number) => Promise<void>;
}

/** Why /readyz answers other than 200. */
export interface NotReady {
  code: Extract<ErrorCode, 'SHUTTING_DOWN' | 'OVERLOADED' | 'INTERNAL_ERROR'>;
  why: string;
}

/** GET /healthz and GET /readyz: on the main port, and on METRICS_PORT where no load on it can delay them (L21). */
export function healthRoutes(router: Router, ready: () => Promise<NotReady | undefined>): void {
  // The version too: during a rolling upgrade a probe tells which node runs what (/metrics says it as bridge_build_info).
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok', version: VERSION } satisfies Health;
  });

  router.get('/readyz', async (ctx) => {
    let notReady: NotReady | undefined;
    try {
      notReady = await ready();
    } catch {
      throw problem('INTERNAL_ERROR', 'database');
    }
    if (notReady) throw new Problem(notReady.code, notReady.why);
    ctx.body = { status: 'ready' } satisfies Readiness;
  });
}

/** GET /metrics: the Prometheus text exposition. */
export function metricsHandler(metrics: PromRegistry) {
  return async (ctx: Context) => {
    ctx.type = metrics.contentType;
    ctx.body = await metrics.metrics();
  };
}

function created(ctx: Context, value: unknown): void {
  ctx.status = 201;
  ctx.body = value;
}

/** The bounds of a searchable listing's parameters (organizations, apps and agents have the same shape). */
type ListingBounds = (typeof QUERY_PARAMETERS)['listOrganizations' | 'listApps' | 'listAgents'];

/** `q`, `after` and `limit` of a listing, each checked against its parameter's schema (D11). */
function listQuery(ctx: Context, bounds: ListingBounds, validateId: (v: unknown) => v is string): ListQuery {
  return {
    q: param(ctx.query.q, 'q', withinLength(bounds.q)),
    after: param(ctx.query.after, 'after', validateId),
    limit: pageLimit(ctx.query.limit, bounds.limit),
  };
}

export function routes(deps: RouteDeps): Router {
  const { registry, directory, clock } = deps;
  const router = new Router();

  // Whoever opens the bridge's address in a browser lands where they can sign in (the sign-in view links the
  // documentation and the probes).
  router.get('/', (ctx) => ctx.redirect('/dashboard'));

  healthRoutes(router, deps.ready);

  if (deps.metrics) router.get('/metrics', metricsHandler(deps.metrics));

  router.get('/v1/organizations/:org_id/agents', async (ctx) => {
    const app = appFromBearer(ctx, directory, clock);
    const bounds = QUERY_PARAMETERS.listDirectoryAgents;
    // The organization first (403 before 400): another organization's directory says nothing, not even its errors.
    if (app.org_id !== ctx.params.org_id) throw problem('FORBIDDEN', 'other_organization');
    const page = {
      after: param(ctx.query.after, 'after', validateAgentId),
      limit: pageLimit(ctx.query.limit, bounds.limit),
    };
    ctx.body = (await registry.directoryFor(app, ctx.params.org_id!, page)) satisfies AgentDirectory;
  });

  const admin = new Router({ prefix: '/admin/v1' });
  const { audit } = deps;
  admin.get('/organizations', (ctx) => {
    ctx.body = registry.organizations(
      listQuery(ctx, QUERY_PARAMETERS.listOrganizations, validateOrgId),
    ) satisfies OrganizationList;
  });
  admin.post('/organizations', async (ctx) => {
    const org = await registry.createOrganization(body(ctx, validateOrganizationCreate));
    await audit.record(actorOf(ctx), 'organization.create', org.org_id, { name: org.name });
    created(ctx, org);
  });
  admin.get('/organizations/:org_id', (ctx) => {
    ctx.body = registry.organization(ctx.params.org_id!) satisfies Organization;
  });
  admin.patch('/organizations/:org_id', async (ctx) => {
    const { view, previous } = await registry.updateOrganization(
      ctx.params.org_id!,
      body(ctx, validateOrganizationUpdate),
    );
    await audit.record(actorOf(ctx), 'organization.update', view.org_id, { name: view.name, previous });
    ctx.body = view;
  });
  admin.delete('/organizations/:org_id', async (ctx) => {
    const name = directory.orgs.get(ctx.params.org_id!)?.name;
    const deleted = await registry.deleteOrganization(ctx.params.org_id!);
    await audit.record(actorOf(ctx), 'organization.delete', deleted.org_id, {
      name,
      apps: deleted.apps,
      agents: deleted.agents,
    });
    ctx.body = deleted;
  });
  admin.get('/organizations/:org_id/apps', (ctx) => {
    ctx.body = registry.apps(
      ctx.params.org_id!,
      listQuery(ctx, QUERY_PARAMETERS.listApps, validateAppId),
    ) satisfies AppList;
  });
  admin.post('/organizations/:org_id/apps', async (ctx) => {
    const app = await registry.createApp(ctx.params.org_id!, body(ctx, validateAppCreate));
    await audit.record(actorOf(ctx), 'app.create', app.app_id, { org_id: app.org_id, name: app.name });
    created(ctx, app);
  });
  admin.get('/organizations/:org_id/agents', (ctx) => {
    ctx.body = registry.agents(
      ctx.params.org_id!,
      listQuery(ctx, QUERY_PARAMETERS.listAgents, validateAgentId),
    ) satisfies AgentList;
  });
  admin.post('/organizations/:org_id/agents', async (ctx) => {
    const agent = await registry.createAgent(ctx.params.org_id!, body(ctx, validateAgentCreate));
    await audit.record(actorOf(ctx), 'agent.create', agent.agent_id, {
      org_id: agent.org_id,
      name: agent.name,
      ttl_days: agent.ttl_days,
    });
    created(ctx, agent);
  });
  admin.get('/apps/:app_id', (ctx) => {
    ctx.body = registry.app(ctx.params.app_id!) satisfies App;
  });
  admin.get('/agents/:agent_id', (ctx) => {
    ctx.body = registry.agent(ctx.params.agent_id!) satisfies Agent;
  });
  admin.patch('/apps/:app_id', async (ctx) => {
    const { view, previous } = await registry.updateApp(ctx.params.app_id!, body(ctx, validateAppUpdate));
    await audit.record(actorOf(ctx), 'app.update', view.app_id, { name: view.name, previous });
    ctx.body = view;
  });
  admin.patch('/agents/:agent_id', async (ctx) => {
    const change = body(ctx, validateAgentUpdate);
    const { view, previous } = await registry.updateAgent(ctx.params.agent_id!, change);
    await audit.record(actorOf(ctx), 'agent.update', view.agent_id, { ...change, previous });
    ctx.body = view;
  });
  admin.put('/agents/:agent_id/allowlist', async (ctx) => {
    const agent = await registry.setAllowlist(ctx.params.agent_id!, body(ctx, validateAllowlistUpdate));
    await audit.record(actorOf(ctx), 'agent.set_allowlist', agent.agent_id, { app_ids: agent.allowlist });
    ctx.body = agent;
  });
  admin.post('/apps/:app_id/rotate-token', async (ctx) => {
    const rotated = await registry.rotateToken('app', ctx.params.app_id!);
    await audit.record(actorOf(ctx), 'app.rotate_token', ctx.params.app_id!, {
      previous_token_expires_at: rotated.previous_token_expires_at,
    });
    ctx.body = rotated;
  });
  admin.post('/agents/:agent_id/rotate-token', async (ctx) => {
    const rotated = await registry.rotateToken('agent', ctx.params.agent_id!);
    await audit.record(actorOf(ctx), 'agent.rotate_token', ctx.params.agent_id!, {
      previous_token_expires_at: rotated.previous_token_expires_at,
    });
    ctx.body = rotated;
  });
  admin.post('/apps/:app_id/deactivate', async (ctx) => {
    const app = await registry.deactivateApp(ctx.params.app_id!);
    await audit.record(actorOf(ctx), 'app.deactivate', app.app_id, { name: app.name });
    ctx.body = app;
  });
  admin.post('/agents/:agent_id/deactivate', async (ctx) => {
    const agent = await registry.deactivateAgent(ctx.params.agent_id!);
    await audit.record(actorOf(ctx), 'agent.deactivate', agent.agent_id, { name: agent.name });
    ctx.body = agent;
  });
  admin.get('/events', async (ctx) => {
    const q = ctx.query;
    const bounds = QUERY_PARAMETERS.listEvents;
    const filter = {
      org_id: param(q.org_id, 'org_id', validateOrgId),
      app_id: param(q.app_id, 'app_id', validateAppId),
      agent_id: param(q.agent_id, 'agent_id', withinLength(bounds.agent_id)),
      status: param(q.status, 'status', validateEventStatus),
      code: param(q.code, 'code', validateErrorCode),
      since: timeParam(q.since, 'since', bounds.since),
      until: timeParam(q.until, 'until', bounds.until),
      before: param(q.before, 'before', validateEventId),
      limit: pageLimit(q.limit, bounds.limit),
    };
    await deps.flushEventLog(); // read your writes: every event answered so far is in the page
    ctx.body = await deps.events.page(filter);
  });
  admin.get('/audit', async (ctx) => {
    const bounds = QUERY_PARAMETERS.listAuditEntries;
    const limit = pageLimit(ctx.query.limit, bounds.limit);
    const before = integerParam(ctx.query.before, 'before', bounds.before);
    ctx.body = (await audit.page({ before, limit })) satisfies AuditLog;
  });
  admin.get('/sessions', async (ctx) => {
    const agentId = param(ctx.query.agent_id, 'agent_id', validateAgentId);
    const appId = param(ctx.query.app_id, 'app_id', validateAppId);
    const after = param(ctx.query.after, 'after', validateSessionKey);
    const limit = pageLimit(ctx.query.limit, QUERY_PARAMETERS.listSessions.limit);
    const page = pageOf(
      await deps.liveSessions(clock.now(), {
        ...(agentId ? { agent_id: agentId } : {}),
        ...(appId ? { app_id: appId } : {}),
      }),
      after,
      limit,
    );
    ctx.body = {
      sessions: page.sessions.map((s) => ({ ...s, created_at: iso(s.created_at), expires_at: iso(s.expires_at) })),
      next_after: page.next_after,
    } satisfies SessionList;
  });
  admin.post('/test/clock', async (ctx) => {
    if (!deps.testClock) throw problem('NOT_FOUND', 'test_clock');
    const { advance_ms } = body(ctx, validateClockAdvance);
    const now = deps.testClock.advance(advance_ms);
    await deps.clockMoved?.(now);
    await audit.record(actorOf(ctx), 'test_clock.advance', null, { advance_ms, now: iso(now) });
    ctx.body = { now: iso(now) } satisfies ClockNow;
  });

  router.use(admin.routes(), admin.allowedMethods());
  return router;
}
