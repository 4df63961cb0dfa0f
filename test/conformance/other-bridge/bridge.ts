// A second, independent bridge for testing the conformance suite: in memory, written from the shared
// specification alone, and deliberately different from this project wherever the specification leaves room.
// `breaks` switches on faults that each break one protocol rule (see breaks.ts).
import type { AddressInfo } from 'node:net';
import { BREAKS, type BreakName } from './breaks.js';
import { FRAGILITIES, type FragilityName } from './fragilities.js';
import { Clock } from './clock.js';
import { Hub } from './connections.js';
import { createHttp } from './http.js';
import { Registry } from './registry.js';

export { BREAKS, FRAGILITIES, type BreakName, type FragilityName };

export interface OtherBridge {
  /** ws://127.0.0.1:PORT/v1 */
  url: string;
  /** http://127.0.0.1:PORT/_ops */
  adminUrl: string;
  close(): Promise<void>;
}

export async function startOtherBridge(
  options: { breaks?: BreakName[]; fragile?: FragilityName[]; agentTimeoutMs?: number } = {},
): Promise<OtherBridge> {
  for (const name of options.breaks ?? []) if (!(name in BREAKS)) throw new Error(`unknown break: ${name}`);
  for (const name of options.fragile ?? []) if (!(name in FRAGILITIES)) throw new Error(`unknown fragility: ${name}`);
  const breaks = new Set(options.breaks ?? []);
  const clock = new Clock(Date.now());
  const registry = new Registry(clock, breaks.has('old-token-forever'));
  const hub = new Hub(registry, clock, breaks, options.agentTimeoutMs ?? 300_000);
  // A fragile variant that runs out of room ends as a crashed process would: every socket gone, nothing listening.
  const die = () => {
    if (!server.listening) return;
    server.close();
    terminateSockets();
    server.closeAllConnections();
  };
  const { server, terminateSockets } = createHttp(registry, hub, clock, breaks, new Set(options.fragile), die);
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
