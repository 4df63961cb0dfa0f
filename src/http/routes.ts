// The HTTP routes of spec/openapi.yaml: health, the agent directory, the admin API and the test clock.
import { Router } from '@koa/router';
import type { Context } from 'koa';
import {
  validateAgentCreate,
  validateAllowlistUpdate,
  validateAppCreate,
  validateAgentId,
  validateAppId,
  validateClockAdvance,
  validateErrorCode,
  validateEventId,
  validateEventStatus,
  validateOrganizationCreate,
  validateSessionKey,
  type AgentList,
  type AppList,
  type ClockNow,
  type Health,
  type Readiness,
  type SessionList,
  type OrganizationList,
  QUERY_PARAMETERS,
  type ErrorCode,
} from '../../generated/index.js';
import type { Registry } from '../admin/registry.js';
import { Problem, problem } from '../admin/problem.js';
import type { AdjustableClock, Clock } from '../shared/clock.js';
import type { Directory } from '../core/directory.js';
import { pageOf, type SessionRecord } from '../core/sessions.js';
import type { EventLogReader } from '../store/event-log.js';
import type { Registry as PromRegistry } from 'prom-client';
import { appFromBearer } from './auth.js';
import { body, pageLimit, param, withinLength } from './input.js';

export interface RouteDeps {
  registry: Registry;
  events: EventLogReader;
  /** Commits what the event log has queued (on several nodes, every node's), so that a listing reads its writes. */
  flushEventLog(): Promise<void>;
  /** The live sessions matching `filter`, sorted by key (on several nodes, every node's: O14). */
  liveSessions(now: number, filter: { agent_id?: string; app_id?: string }): Promise<SessionRecord[]>;
  /** Undefined when /metrics is served on its own port instead (METRICS_PORT, O12). */
  metrics: PromRegistry | undefined;
  /** Why the bridge takes no new traffic now (undefined: it does); throws when the database does not answer. */
  ready(): Promise<{ code: Extract<ErrorCode, 'SHUTTING_DOWN' | 'OVERLOADED' | 'INTERNAL_ERROR'>; why: string } | undefined>;
  directory: Directory;
  clock: Clock;
  adminToken: string | undefined;
  /** Present only in test-clock mode (BRIDGE_TEST_CLOCK=1). */
  testClock: AdjustableClock | undefined;
  /** After the test clock moved to `now`: resolves once every node's clock has (several nodes, O14). */
  clockMoved?: (now: number) => Promise<void>;
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

export function routes(deps: RouteDeps): Router {
  const { registry, directory, clock } = deps;
  const router = new Router();

  // Whoever opens the bridge's address in a browser lands where they can sign in (the sign-in view links the
  // documentation and the probes).
  router.get('/', (ctx) => ctx.redirect('/dashboard'));

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' } satisfies Health;
  });

  router.get('/readyz', async (ctx) => {
    let notReady: Awaited<ReturnType<RouteDeps['ready']>>;
    try {
      notReady = await deps.ready();
    } catch {
      throw problem('INTERNAL_ERROR', 'database');
    }
    if (notReady) throw new Problem(notReady.code, notReady.why);
    ctx.body = { status: 'ready' } satisfies Readiness;
  });

  if (deps.metrics) router.get('/metrics', metricsHandler(deps.metrics));

  router.get('/v1/organizations/:org_id/agents', async (ctx) => {
    ctx.body = await registry.directoryFor(appFromBearer(ctx, directory, clock), ctx.params.org_id!);
  });

  const admin = new Router({ prefix: '/admin/v1' });
  admin.get('/organizations', (ctx) => {
    ctx.body = { organizations: registry.organizations(), next_after: null } satisfies OrganizationList;
  });
  admin.post('/organizations', async (ctx) => created(ctx, await registry.createOrganization(body(ctx, validateOrganizationCreate))));
  admin.delete('/organizations/:org_id', async (ctx) => {
    ctx.body = await registry.deleteOrganization(ctx.params.org_id!);
  });
  admin.get('/organizations/:org_id/apps', (ctx) => {
    ctx.body = { apps: registry.apps(ctx.params.org_id!), next_after: null } satisfies AppList;
  });
  admin.post('/organizations/:org_id/apps', async (ctx) =>
    created(ctx, await registry.createApp(ctx.params.org_id!, body(ctx, validateAppCreate))),
  );
  admin.get('/organizations/:org_id/agents', (ctx) => {
    ctx.body = { agents: registry.agents(ctx.params.org_id!), next_after: null } satisfies AgentList;
  });
  admin.post('/organizations/:org_id/agents', async (ctx) =>
    created(ctx, await registry.createAgent(ctx.params.org_id!, body(ctx, validateAgentCreate))),
  );
  admin.put('/agents/:agent_id/allowlist', async (ctx) => {
    ctx.body = await registry.setAllowlist(ctx.params.agent_id!, body(ctx, validateAllowlistUpdate));
  });
  admin.post('/apps/:app_id/rotate-token', async (ctx) => {
    ctx.body = await registry.rotateToken('app', ctx.params.app_id!);
  });
  admin.post('/agents/:agent_id/rotate-token', async (ctx) => {
    ctx.body = await registry.rotateToken('agent', ctx.params.agent_id!);
  });
  admin.post('/apps/:app_id/deactivate', async (ctx) => {
    ctx.body = await registry.deactivateApp(ctx.params.app_id!);
  });
  admin.post('/agents/:agent_id/deactivate', async (ctx) => {
    ctx.body = await registry.deactivateAgent(ctx.params.agent_id!);
  });
  admin.get('/events', async (ctx) => {
    const q = ctx.query;
    const limit = pageLimit(q.limit, QUERY_PARAMETERS.listEvents.limit);
    const filter = {
      app_id: param(q.app_id, 'app_id', validateAppId),
      agent_id: param(q.agent_id, 'agent_id', withinLength(QUERY_PARAMETERS.listEvents.agent_id)),
      status: param(q.status, 'status', validateEventStatus),
      code: param(q.code, 'code', validateErrorCode),
      before: param(q.before, 'before', validateEventId),
      limit,
    };
    await deps.flushEventLog(); // read your writes: every event answered so far is in the page
    ctx.body = await deps.events.page(filter);
  });
  admin.get('/sessions', async (ctx) => {
    const agentId = param(ctx.query.agent_id, 'agent_id', validateAgentId);
    const appId = param(ctx.query.app_id, 'app_id', validateAppId);
    const after = param(ctx.query.after, 'after', validateSessionKey);
    const iso = (ms: number) => new Date(ms).toISOString();
    const limit = pageLimit(ctx.query.limit, QUERY_PARAMETERS.listSessions.limit);
    const page = pageOf(await deps.liveSessions(clock.now(), { ...(agentId ? { agent_id: agentId } : {}), ...(appId ? { app_id: appId } : {}) }), after, limit);
    ctx.body = {
      sessions: page.sessions.map((s) => ({ ...s, created_at: iso(s.created_at), expires_at: iso(s.expires_at) })),
      next_after: page.next_after,
    } satisfies SessionList;
  });
  admin.post('/test/clock', async (ctx) => {
    if (!deps.testClock) throw problem('NOT_FOUND', 'test_clock');
    const now = deps.testClock.advance(body(ctx, validateClockAdvance).advance_ms);
    await deps.clockMoved?.(now);
    ctx.body = { now: new Date(now).toISOString() } satisfies ClockNow;
  });

  router.use(admin.routes(), admin.allowedMethods());
  return router;
}
