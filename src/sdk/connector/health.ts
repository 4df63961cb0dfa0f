// The optional HTTP health endpoint (§2.6): GET (or HEAD) on the configured path returns ConnectorHealth JSON,
// status 200 while at least one agent is connected (ok, degraded) and 503 when none is (down), so a probe can use
// the status code alone. Anything else: 404, or 405 for another method.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConnectorAgentHealth, ConnectorHealth, ConnectorStatus } from '../../../generated/index.js';
import { isListenError, listenFailure } from '../../shared/listen-error.js';

/** ok: every agent connected; degraded: some; down: none. */
export function connectorStatus(agents: Record<string, ConnectorAgentHealth>): ConnectorStatus {
  const all = Object.values(agents);
  const up = all.filter((a) => a.connected).length;
  return up > 0 && up === all.length ? 'ok' : up > 0 ? 'degraded' : 'down';
}

export interface HealthServer {
  /** `http://host:port/path` */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Listens on `options.host` (the configuration's default is 127.0.0.1: this machine only). */
export async function startHealthServer(
  options: { port: number; path: string; host: string },
  report: () => ConnectorHealth,
): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const text = JSON.stringify(body);
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
        'content-length': Buffer.byteLength(text),
        ...headers,
      });
      res.end(req.method === 'HEAD' ? undefined : text);
    };
    if (path !== options.path)
      return send(404, { code: 'NOT_FOUND', error: `No such path; the health endpoint is ${options.path}.` });
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(405, { code: 'INVALID_REQUEST', error: 'Use GET.' }, { allow: 'GET, HEAD' });
    let health: ConnectorHealth;
    try {
      health = report();
    } catch (err) {
      return send(500, { code: 'INTERNAL_ERROR', error: err instanceof Error ? err.message : String(err) });
    }
    send(health.status === 'down' ? 503 : 200, health);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(
        isListenError(err)
          ? new Error(
              `the health endpoint ${listenFailure(err, options.host, options.port, 'health.port, health.host')}`,
            )
          : err,
      ),
    );
    server.listen(options.port, options.host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  // The address actually bound (0.0.0.0 stays 0.0.0.0), so the log says who can reach the endpoint.
  const { port, address } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}${options.path}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
