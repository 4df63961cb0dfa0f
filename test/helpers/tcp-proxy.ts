// A TCP proxy in front of a server (PostgreSQL, or the bridge for an app whose connection drops) that a test can
// cut and restore, to make the server unreachable without stopping it (other tests share it). `cut()` is a restart
// or a dropped network as the client sees it: open connections reset, new ones refused. `reset()` is a dropped
// network that is back at once: open connections reset, new ones go through (optionally leaving the server's side
// open, as a server that has not noticed). `stall()` is a network that swallows packets: connections are taken and
// held open, and nothing goes through either way, until `restore()`. `delay()` is a slow network toward the server.
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** `url` with its host and port replaced by the proxy's. */
  readonly url: string;
  cut(): Promise<void>;
  /**
   * Resets every open connection on the client's side (ECONNRESET: no close frame, no FIN) and keeps taking new
   * ones. The server's side is closed too, or with `halfOpen` left open with whatever it sends swallowed, so the
   * server notices nothing until it times the connection out.
   */
  reset(options?: { halfOpen?: boolean }): void;
  /** Sends the connections opened from now on to the host and port of `url`, as a load balancer may pick another node. */
  retarget(url: string): void;
  stall(): void;
  /** A slow network toward the server: what the clients send from now on reaches it `ms` later, in order. */
  delay(ms: number): void;
  restore(): Promise<void>;
  close(): Promise<void>;
}

const proxies = new Set<TcpProxy>();

/** A proxy to the host and port of `url` (postgres://…, or http://… of a bridge), listening on 127.0.0.1 at a free port. */
export async function startTcpProxy(url: string): Promise<TcpProxy> {
  let target = new URL(url);
  const pairs = new Set<[Socket, Socket]>();
  /** Server sides that `reset({ halfOpen })` cut off from their client, until they close or the proxy does. */
  const orphans = new Set<Socket>();
  let stalled = false;
  let delayMs = 0;
  let server: Server | undefined;

  const listen = (port: number) =>
    new Promise<Server>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        const pair: [Socket, Socket] = [client, upstream];
        pairs.add(pair);
        const end = () => {
          if (orphans.has(upstream)) return;
          pairs.delete(pair);
          client.destroy();
          upstream.destroy();
        };
        for (const socket of pair) socket.on('error', end).on('close', end);
        upstream.on('close', () => orphans.delete(upstream));
        const toServer = (chunk: Buffer) => void (stalled || upstream.write(chunk));
        // Timers of one delay fire in the order they were set: the bytes keep their order.
        client.on('data', (chunk: Buffer) => (delayMs ? setTimeout(toServer, delayMs, chunk) : toServer(chunk)));
        upstream.on('data', (chunk) => void (stalled || orphans.has(upstream) || client.write(chunk)));
      });
      s.once('error', reject).listen(port, '127.0.0.1', () => resolve(s));
    });

  server = await listen(0);
  const port = (server.address() as { port: number }).port;
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);

  const stopListening = () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  const resetAll = ({ halfOpen = false } = {}) => {
    for (const [client, upstream] of pairs) {
      if (halfOpen) orphans.add(upstream);
      client.resetAndDestroy();
      if (!halfOpen) upstream.destroy();
    }
    pairs.clear();
  };

  const proxy: TcpProxy = {
    url: proxied.toString(),
    async cut() {
      const closed = stopListening();
      server = undefined;
      resetAll();
      await closed;
    },
    reset(options) {
      resetAll(options);
    },
    retarget(next) {
      target = new URL(next);
    },
    stall() {
      stalled = true;
    },
    delay(ms) {
      delayMs = ms;
    },
    async restore() {
      if (stalled) {
        // What was swallowed is gone: the connections it broke are reset, as TCP would end them in the end.
        stalled = false;
        resetAll();
      }
      server ??= await listen(port);
    },
    async close() {
      proxies.delete(proxy);
      const closed = stopListening();
      server = undefined;
      resetAll();
      for (const upstream of orphans) upstream.destroy();
      await closed;
    },
  };
  proxies.add(proxy);
  return proxy;
}

/** Closes every proxy a test started (from its afterEach). */
export async function closeTcpProxies(): Promise<void> {
  await Promise.all([...proxies].map((p) => p.close()));
}
