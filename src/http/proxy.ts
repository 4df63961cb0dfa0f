// Reverse proxies in front of the bridge (TRUST_PROXY, O12): Koa believes the X-Forwarded-Proto and X-Forwarded-For
// of that many proxies, and the WebSocket handshake asks Koa, so that HTTP and WebSockets never disagree on who a
// client is.
import { ServerResponse, type IncomingMessage } from 'node:http';
import type Koa from 'koa';

/**
 * Koa's settings for `hops` proxies: with `maxIpsCount` it takes the address the outermost trusted proxy added,
 * never one a client wrote itself further left in X-Forwarded-For. 0 believes no header.
 */
export function proxyOptions(hops: number): { proxy: boolean; maxIpsCount: number } {
  return { proxy: hops > 0, maxIpsCount: hops };
}

/** The client's address by Koa's rule (`ctx.ip`): the TCP peer's, or the forwarded one behind trusted proxies. */
export function clientAddress(app: Koa, req: IncomingMessage): string | undefined {
  // An upgrade request has no response object; this one is never written, it only completes a Koa context.
  return app.createContext(req, new ServerResponse(req)).ip || undefined;
}
