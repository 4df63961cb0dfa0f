// The HTTP server: WebSocket upgrades (authenticated here, then handed to the hub), the agent directory and the
// operator interface. Refused handshakes are still upgraded so the client can read why (see refuse()).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { WebSocketServer } from 'ws';
import type { BreakName } from './breaks.js';
import { makeFragile, type FragilityName } from './fragilities.js';
import type { Clock } from './clock.js';
import { refuse, type Hub } from './connections.js';
import { OPS_KEY, OpError, runOp } from './ops.js';
import type { Registry } from './registry.js';

const DIRECTORY = /^\/v1\/organizations\/([^/]+)\/agents$/;

function bearer(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return match?.[1];
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new OpError(400, 'body must be a JSON object');
  return body as Record<string, unknown>;
}

/** The server, and a function that ends every WebSocket at once (for shutdown). */
export function createHttp(
  registry: Registry,
  hub: Hub,
  clock: Clock,
  breaks: ReadonlySet<BreakName>,
  fragile: ReadonlySet<FragilityName> = new Set(),
  die: () => void = () => {},
): { server: Server; terminateSockets: () => void } {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const dir = DIRECTORY.exec(url.pathname);
    if (req.method === 'GET' && dir) {
      const auth = registry.authenticate(bearer(req));
      if (!auth.ok || auth.client.kind !== 'app') return reply(res, 401, { message: 'an app token is required' });
      const app = auth.client;
      if (decodeURIComponent(dir[1] ?? '') !== app.org) return reply(res, 404, { message: 'no such organization' });
      const agents = registry.agentsOf(app.org).map((a) => ({
        id: a.ref,
        name: a.label,
        description: a.about,
        status: hub.isOnline(a.ref) ? 'online' : 'offline',
        allowlisted: registry.mayUse(a, app),
      }));
      return reply(res, 200, { agents });
    }
    if (req.method === 'POST' && url.pathname === '/_ops') {
      if (req.headers['x-ops-key'] !== OPS_KEY) return reply(res, 403, { problem: 'bad ops key' });
      readJson(req)
        .then((body) => reply(res, 200, runOp(body, registry, hub, clock)))
        .catch((e: unknown) =>
          reply(res, e instanceof OpError ? e.status : 400, { problem: String((e as Error).message) }),
        );
      return;
    }
    reply(res, 404, { message: 'not found' });
  });

  const wss = new WebSocketServer({ noServer: true });
  const fragility = makeFragile(server, fragile, die);
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const kind = url.pathname === '/v1/ws/app' ? 'app' : url.pathname === '/v1/ws/agent' ? 'agent' : undefined;
    if (!kind) return void socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('error', () => {}); // a client's protocol error only ends its own connection
      // When both carriers are present, the query token wins.
      const auth = registry.authenticate(url.searchParams.get('token') || bearer(req));
      if (!auth.ok) return refuse(ws, auth.code);
      if (auth.client.kind !== kind) {
        return refuse(ws, kind === 'app' && breaks.has('forbidden-as-unauthorized') ? 'UNAUTHORIZED' : 'FORBIDDEN');
      }
      if (kind === 'app') fragility.app(ws);
      if (kind === 'app') hub.attachApp(ws, auth.client);
      else hub.attachAgent(ws, auth.client);
    });
  });
  return { server, terminateSockets: () => wss.clients.forEach((ws) => ws.terminate()) };
}
