// A second, independent bridge for testing the conformance suite: in memory, written from the shared
// specification alone, and deliberately different from this project wherever the specification leaves room.
// `breaks` switches on faults that each break one protocol rule (see breaks.ts).
import type { AddressInfo } from 'node:net';
import { BREAKS, type BreakName } from './breaks.js';
import { Clock } from './clock.js';
import { Hub } from './connections.js';
import { createHttp } from './http.js';
import { Registry } from './registry.js';

export { BREAKS, type BreakName };

export interface OtherBridge {
  /** ws://127.0.0.1:PORT/v1 */
  url: string;
  /** http://127.0.0.1:PORT/_ops */
  adminUrl: string;
  close(): Promise<void>;
}

export async function startOtherBridge(
  options: { breaks?: BreakName[]; agentTimeoutMs?: number } = {},
): Promise<OtherBridge> {
  for (const name of options.breaks ?? []) if (!(name in BREAKS)) throw new Error(`unknown break: ${name}`);
  const breaks = new Set(options.breaks ?? []);
  const clock = new Clock(Date.now());
  const registry = new Registry(clock, breaks.has('old-token-forever'));
  const hub = new Hub(registry, clock, breaks, options.agentTimeoutMs ?? 300_000);
  const { server, terminateSockets } = createHttp(registry, hub, clock, breaks);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/v1`,
    adminUrl: `http://127.0.0.1:${port}/_ops`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        terminateSockets(); // upgraded sockets are no longer the HTTP server's to close
        server.closeAllConnections();
      }),
  };
}
