// No slot without a token (L21). A TCP connection is unauthenticated from its accept until a WebSocket handshake on
// it is accepted by the core, or until it closes: a handshake under way or refused and still closing, an HTTP
// request in flight, a keep-alive connection between requests. They are counted on the server's 'connection'
// event and bounded in all and per address. When all of them are held, one more takes the slot of the oldest
// that has held one for unauthenticatedEvictAfterMs with no request being answered on it (a half-sent request, a
// keep-alive connection between requests): whoever fills the slots must keep opening faster than that to keep
// others out. Otherwise, and over the address's bound, one more is answered 503 before its request is read.
// Requests that take too long are answered 408 by the server's own deadlines, set here too.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ERRORS, LIMITS, type ErrorCode } from '../../generated/index.js';
import { BurstLog, LOG_WINDOW_MS } from '../core/burst-log.js';
import type { Clock } from '../shared/clock.js';
import { errorText } from '../shared/error-text.js';
import type { Logger } from '../shared/logger.js';

export interface UnauthenticatedLimits {
  /** Every unauthenticated connection (LIMITS.unauthenticatedConnectionsMax). */
  total: number;
  /** Those of one remote address; 0 turns the bound off (and it is off behind trusted proxies). */
  perAddress: number;
}

/** The bound a new connection would cross: the `bound` label of the metric. */
export type UnauthenticatedBound = 'total' | 'address';

export interface UnauthenticatedStats {
  /** Unauthenticated connections now. */
  open: number;
  /** Connections refused since start, by bound. */
  refused: Record<UnauthenticatedBound, number>;
  /** Requests answered 408 REQUEST_TIMEOUT since start. */
  timedOut: number;
  /** Connections closed since start to give their slot to a newer one. */
  evicted: number;
}

/**
 * Options of the HTTP(S) server for its deadlines: Node's defaults (60 s for headers, 300 s for a request,
 * checked every 30 s) let a slow sender hold a connection for minutes. `handshakeTimeout` is TLS's.
 */
export const SERVER_DEADLINES = {
  headersTimeout: LIMITS.httpHeadersTimeoutMs,
  requestTimeout: LIMITS.httpRequestTimeoutMs,
  connectionsCheckingInterval: 1000,
  handshakeTimeout: LIMITS.httpHeadersTimeoutMs,
} as const;

/** A connection's key while it is open: its peer's address and port name one live TCP connection. */
const keyOf = (socket: { remoteAddress?: string | undefined; remotePort?: number | undefined }) =>
  socket.remoteAddress === undefined ? undefined : `${socket.remoteAddress}|${socket.remotePort}`;

/** An HTTP response written on a raw socket, with the one error body of H1. */
function httpError(code: ErrorCode, error: string, reason: string): string {
  const body = JSON.stringify({ code, error });
  return `HTTP/1.1 ${ERRORS[code].httpStatus} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Node's own answers to a request it cannot parse, kept when a 'clientError' listener takes over from it. */
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';
const HEADERS_TOO_LARGE = 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n';

export class UnauthenticatedConnections {
  private open = 0;
  private readonly byAddress = new Map<string, number>();
  /** Open unauthenticated connections by key, oldest first. */
  private readonly live = new Map<string, { address: string; at: number; socket: Socket; answering: number }>();
  private readonly refused: Record<UnauthenticatedBound, number> = { total: 0, address: 0 };
  private timedOut = 0;
  private evicted = 0;
  private readonly refusedLog: BurstLog<UnauthenticatedBound>;
  private readonly timeoutLog: BurstLog<'timeout'>;
  private readonly evictedLog: BurstLog<'evicted'>;

  constructor(
    private readonly limits: UnauthenticatedLimits,
    private readonly deps: { clock: Clock; log: Logger; tls: boolean },
  ) {
    this.refusedLog = new BurstLog({
      clock: deps.clock,
      windowMs: LOG_WINDOW_MS,
      report: (bounds, refused) =>
        deps.log.warn(
          { refused, bounds: Object.fromEntries(bounds) },
          `unauthenticated connections refused: ${refused}`,
        ),
    });
    this.evictedLog = new BurstLog({
      clock: deps.clock,
      windowMs: LOG_WINDOW_MS,
      report: (_, evicted) =>
        deps.log.warn({ evicted }, `unauthenticated connections closed for a newer one (all slots held): ${evicted}`),
    });
    this.timeoutLog = new BurstLog({
      clock: deps.clock,
      windowMs: LOG_WINDOW_MS,
      report: (_, timedOut) => deps.log.info({ timedOut }, `HTTP requests timed out (REQUEST_TIMEOUT): ${timedOut}`),
    });
  }

  /** Counts the server's connections from now on, and answers its late requests. */
  watch(server: Server): void {
    server.on('connection', (socket: Socket) => this.accepted(socket));
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.clientError(err, socket));
    // Over TLS the request's socket is the TLSSocket on the TCP one counted: the same peer, so the same key.
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const held = this.live.get(keyOf(req.socket) ?? '');
      if (!held) return;
      held.answering++;
      res.once('close', () => held.answering--);
    });
  }

  /** The core accepted a WebSocket handshake on this connection: it holds a slot of its own now (L18). */
  authenticated(socket: Duplex): void {
    const key = keyOf(socket as Partial<Socket>); // a net.Socket, or over TLS the TLSSocket on it (same peer)
    if (key !== undefined) this.forget(key);
  }

  stats(): UnauthenticatedStats {
    return { open: this.open, refused: { ...this.refused }, timedOut: this.timedOut, evicted: this.evicted };
  }

  stop(): void {
    this.refusedLog.stop();
    this.timeoutLog.stop();
    this.evictedLog.stop();
  }

  private accepted(socket: Socket): void {
    const key = keyOf(socket);
    if (key === undefined) return; // already gone
    const address = socket.remoteAddress!;
    const over = this.over(address);
    if (over && !(over.bound === 'total' && this.evictOldest())) return this.refuse(socket, over.bound, over.error);
    this.open++;
    this.live.set(key, { address, at: this.deps.clock.monotonic(), socket, answering: 0 });
    this.byAddress.set(address, (this.byAddress.get(address) ?? 0) + 1);
    socket.once('close', () => this.forget(key));
  }

  private over(address: string): { bound: UnauthenticatedBound; error: string } | undefined {
    const { total, perAddress } = this.limits;
    if (this.open >= total)
      return { bound: 'total', error: errorText('TOO_MANY_CONNECTIONS', 'unauthenticated', { count: this.open }) };
    if (perAddress > 0 && (this.byAddress.get(address) ?? 0) >= perAddress) {
      return {
        bound: 'address',
        error: errorText('TOO_MANY_CONNECTIONS', 'unauthenticated_address', { address, count: perAddress }),
      };
    }
    return undefined;
  }

  /** Answered before its request is read, then closed; over TLS no answer can be given before the handshake. */
  private refuse(socket: Socket, bound: UnauthenticatedBound, error: string): void {
    this.refused[bound]++;
    this.refusedLog.record(bound);
    socket.on('error', () => {}); // a client that resets meanwhile is no error of ours
    if (this.deps.tls) return void socket.destroy();
    socket.end(httpError('TOO_MANY_CONNECTIONS', error, 'Service Unavailable'));
    socket.destroySoon();
  }

  /** Closes the oldest connection that has held its slot long enough with no request being answered on it. */
  private evictOldest(): boolean {
    const before = this.deps.clock.monotonic() - LIMITS.unauthenticatedEvictAfterMs;
    for (const [key, held] of this.live) {
      if (held.at > before) return false; // oldest first: the rest are younger still
      // A request being answered (an admin call, a slow listing) is never cut short for a newcomer.
      if (held.answering > 0) continue;
      this.forget(key);
      held.socket.destroy();
      this.evicted++;
      this.evictedLog.record('evicted');
      return true;
    }
    return false;
  }

  private forget(key: string): void {
    const address = this.live.get(key)?.address;
    if (address === undefined) return;
    this.live.delete(key);
    this.open--;
    const n = (this.byAddress.get(address) ?? 1) - 1;
    if (n > 0) this.byAddress.set(address, n);
    else this.byAddress.delete(address);
  }

  /** What Node answers by itself without a listener, but a late request gets REQUEST_TIMEOUT with its body (H1). */
  private clientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    const late = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    if (late) {
      this.timedOut++;
      this.timeoutLog.record('timeout');
    }
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      if (late) {
        const text = errorText('REQUEST_TIMEOUT', 'incomplete', {
          headers_seconds: LIMITS.httpHeadersTimeoutMs / 1000,
          request_seconds: LIMITS.httpRequestTimeoutMs / 1000,
        });
        socket.write(httpError('REQUEST_TIMEOUT', text, 'Request Timeout'));
      } else if (err.code !== 'ECONNRESET') {
        socket.write(err.code === 'HPE_HEADER_OVERFLOW' ? HEADERS_TOO_LARGE : BAD_REQUEST);
      }
    }
    socket.destroy(err);
  }
}
