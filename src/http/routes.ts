// The HTTP routes of spec/openapi.yaml: health, the agent directory, the admin API and the test clock.
import { Router } from '@koa/router';
import type { Context } from 'koa';
import {
  describeErrors,
  validateAgentCreate,
  validateAllowlistUpdate,
  validateAppCreate,
  validateClockAdvance,
  validateOrganizationCreate,
  type AgentList,
  type AppList,
  type ClockNow,
  type Health,
  type OrganizationList,
  type Validator,
} from '../../generated/index.js';
import type { Registry } from '../admin/registry.js';
import { Problem } from '../admin/problem.js';
import type { AdjustableClock, Clock } from '../core/clock.js';
import type { Directory } from '../core/directory.js';
import { appFromBearer } from './auth.js';

export interface RouteDeps {
  registry: Registry;
  directory: Directory;
  clock: Clock;
  adminToken: string | undefined;
  /** Present only in test-clock mode (BRIDGE_TEST_CLOCK=1). */
  testClock: AdjustableClock | undefined;
}

function body<T>(ctx: Context, validate: Validator<T>): T {
  const value = (ctx.request as { body?: unknown }).body;
  if (!validate(value)) throw new Problem('INVALID_REQUEST', `Invalid request body: ${describeErrors(validate.errors)}.`);
  return value;
}

function created(ctx: Context, value: unknown): void {
  ctx.status = 201;
  ctx.body = value;
}

export function routes(deps: RouteDeps): Router {
  const { registry, directory, clock } = deps;
  const router = new Router();

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' } satisfies Health;
  });

  router.get('/v1/organizations/:org_id/agents', (ctx) => {
    ctx.body = registry.directoryFor(appFromBearer(ctx, directory, clock), ctx.params.org_id!);
  });

  const admin = new Router({ prefix: '/admin/v1' });
  admin.get('/organizations', (ctx) => {
    ctx.body = { organizations: registry.organizations() } satisfies OrganizationList;
  });
  admin.post('/organizations', async (ctx) => created(ctx, await registry.createOrganization(body(ctx, validateOrganizationCreate))));
  admin.get('/organizations/:org_id/apps', (ctx) => {
    ctx.body = { apps: registry.apps(ctx.params.org_id!) } satisfies AppList;
  });
  admin.post('/organizations/:org_id/apps', async (ctx) =>
    created(ctx, await registry.createApp(ctx.params.org_id!, body(ctx, validateAppCreate))),
  );
  admin.get('/organizations/:org_id/agents', (ctx) => {
    ctx.body = { agents: registry.agents(ctx.params.org_id!) } satisfies AgentList;
  });
  admin.post('/organizations/:org_id/agents', async (ctx) =>
    created(ctx, await registry.createAgent(ctx.params.org_id!, body(ctx, validateAgentCreate))),
  );
  admin.put('/agents/:agent_id/allowlist', async (ctx) => {
    ctx.body = await registry.setAllowlist(ctx.params.agent_id!, body(ctx, validateAllowlistUpdate));
  });
  admin.post('/test/clock', (ctx) => {
    if (!deps.testClock) throw new Problem('NOT_FOUND', 'The test clock exists only when the bridge runs with BRIDGE_TEST_CLOCK=1.');
    const now = deps.testClock.advance(body(ctx, validateClockAdvance).advance_ms);
    ctx.body = { now: new Date(now).toISOString() } satisfies ClockNow;
  });

  router.use(admin.routes(), admin.allowedMethods());
  return router;
}
