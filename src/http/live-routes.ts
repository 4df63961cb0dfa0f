// The admin API's live routes (D8, D9): the overview of every node, an organization's live picture, and test
// events streamed back as server-sent events.
import { Router } from '@koa/router';
import {
  FIELD_BOUNDS,
  LIMITS,
  QUERY_PARAMETERS,
  validateConnectionId,
  validateTestEvent,
  type ClosedConnection,
  type Overview,
  type OverviewNode,
} from '../../generated/index.js';
import { problem } from '../admin/problem.js';
import { organizationLive, requireOrganization, LAST_MINUTE_MS } from '../admin/org-live.js';
import type { Principal } from '../core/directory.js';
import type { ClosedOnNode, NodeConnections } from '../core/live-picture.js';
import type { ConnectionHandlers, Socket } from '../core/transport.js';
import { iso } from '../shared/time.js';
import { inProcessApp } from './in-process-app.js';
import { actorOf } from './auth.js';
import { body, integerParam } from './input.js';
import type { RouteDeps } from './routes.js';

/** A node's answer and the nodes that gave none within 1 s (several nodes, O14). */
export interface FromEveryNode<T> {
  nodes: T[];
  missing_nodes: string[];
}

/** A test event's thread when the request names none. */
export const TEST_EVENT_THREAD = FIELD_BOUNDS.TestEvent.thread_id.default;

export interface LiveDeps {
  /** Every node's numbers now and its samples taken after `after` (D8). */
  overview(after: number | undefined): Promise<FromEveryNode<OverviewNode>>;
  /** The organization's live connections on every node. */
  organizationConnections(orgId: string): Promise<FromEveryNode<NodeConnections>>;
  /** Opens a connection inside the bridge as `principal`, within its bounds (the core's `open`; D9). */
  openConnection(socket: Socket, principal: Principal): ConnectionHandlers;
  /** Closes the connection on whichever node holds it (H8); `closed` is undefined when none does. */
  disconnect(connectionId: string): Promise<{ closed: ClosedOnNode | undefined; missing_nodes: string[] }>;
}

/** NOT_FOUND for a connection no node holds, naming the nodes that did not answer, which may. */
function noSuchConnection(connectionId: string, missingNodes: string[]) {
  const connection_id = connectionId.slice(0, 80);
  return missingNodes.length
    ? problem('NOT_FOUND', 'connection_unanswered', { connection_id, nodes: missingNodes.sort().join(', ') })
    : problem('NOT_FOUND', 'connection', { connection_id });
}

export function liveRoutes(deps: RouteDeps & LiveDeps): Router {
  const { directory, clock } = deps;
  const admin = new Router({ prefix: '/admin/v1' });

  admin.get('/overview', async (ctx) => {
    const after = integerParam(ctx.query.after, 'after', QUERY_PARAMETERS.getOverview.after);
    const { nodes, missing_nodes } = await deps.overview(after);
    ctx.body = {
      at: clock.now(),
      sample_ms: LIMITS.overviewSampleMs,
      window_ms: LIMITS.overviewWindowMs,
      nodes: nodes.sort((a, b) => a.node_id.localeCompare(b.node_id)),
      missing_nodes: missing_nodes.sort(),
    } satisfies Overview;
  });

  admin.get('/organizations/:org_id/live', async (ctx) => {
    const orgId = ctx.params.org_id!;
    requireOrganization(directory, orgId);
    // Read your writes, as GET /admin/v1/events does: every event answered so far is counted.
    const [connections] = await Promise.all([deps.organizationConnections(orgId), deps.flushEventLog()]);
    const lastMinute = await deps.events.agentActivity(orgId, clock.now() - LAST_MINUTE_MS);
    ctx.body = organizationLive(directory, orgId, connections.nodes, lastMinute, connections.missing_nodes);
  });

  admin.delete('/connections/:connection_id', async (ctx) => {
    const connectionId = ctx.params.connection_id!;
    // A malformed id names no connection: no node is asked.
    if (!validateConnectionId(connectionId)) throw noSuchConnection(connectionId, []);
    const { closed, missing_nodes } = await deps.disconnect(connectionId);
    if (!closed) throw noSuchConnection(connectionId, missing_nodes);
    const { node_id, kind, id, org_id } = closed;
    await deps.audit.record(actorOf(ctx), 'connection.disconnect', connectionId, {
      node_id,
      kind,
      [kind === 'app' ? 'app_id' : 'agent_id']: id,
      org_id,
    });
    ctx.body = {
      connection_id: connectionId,
      node_id,
      kind,
      id,
      org_id,
      connected_at: iso(closed.connected_at),
    } satisfies ClosedConnection;
  });

  admin.post('/test-events', async (ctx) => {
    const request = body(ctx, validateTestEvent);
    const app = directory.apps.get(request.app_id);
    if (!app) throw problem('NOT_FOUND', 'owner', { owner: `App ${request.app_id}` });
    const agent = directory.agents.get(request.agent_id);
    if (!agent) throw problem('NOT_FOUND', 'owner', { owner: `Agent ${request.agent_id}` });
    if (app.org_id !== agent.org_id)
      throw problem('INVALID_REQUEST', 'foreign_apps', { org_id: agent.org_id, app_ids: app.app_id });
    if (!app.active) throw problem('INVALID_REQUEST', 'app_deactivated', { app_id: app.app_id });
    const tokens = directory.tokensOf(app.app_id);
    // Authenticated as the app with its current token: what one of its instances would hold.
    const token = tokens.find((t) => t.expires_at === null) ?? tokens.at(-1)!;
    const threadId = request.thread_id ?? TEST_EVENT_THREAD;
    // Recorded before it is sent (D10): the event reaches the agent, whatever becomes of the stream.
    await deps.audit.record(actorOf(ctx), 'test_event.send', agent.agent_id, {
      app_id: app.app_id,
      thread_id: threadId,
    });

    const instance = inProcessApp({
      clock,
      open: (socket) => deps.openConnection(socket, { kind: 'app', app, token }),
      eventFrame: JSON.stringify({
        type: 'event',
        agent_id: agent.agent_id,
        thread_id: threadId,
        payload: request.payload,
      }),
      response: ctx.res,
    });
    ctx.res.once('close', () => instance.abandon());
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('X-Accel-Buffering', 'no'); // nginx would otherwise hold the frames back until its buffer fills
    ctx.body = instance.stream;
  });

  return admin;
}
