// A stand-in for one node of a cluster: a TCP proxy on port 0 that relays bytes to a real bridge unchanged, so
// three of them make one bridge reachable at three URLs. It notes the request line of every HTTP request that passes
// (a WebSocket upgrade is one), so a test can tell which "node" each connection and call went through.
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  /** `ws://127.0.0.1:PORT/v1` */
  wsUrl: string;
  /** Request lines seen, in order: `GET /v1/ws/agent HTTP/1.1`, `POST /admin/v1/test/clock HTTP/1.1`, … */
  requests: string[];
  close(): Promise<void>;
}

/** Client bytes are parsed only for request lines; a WebSocket frame from a client is masked, so it cannot fake one. */
const REQUEST_LINE = /(?:^|\r\n)((?:GET|POST|PUT|PATCH|DELETE) \S+ HTTP\/1\.1)\r\n/g;

export async function startTcpProxy(upstreamPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const requests: string[] = [];
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    track(client);
    track(upstream);
    client.on('data', (chunk: Buffer) => {
      for (const m of chunk.toString('latin1').matchAll(REQUEST_LINE)) requests.push(m[1]!);
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    wsUrl: `ws://127.0.0.1:${port}/v1`,
    requests,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
