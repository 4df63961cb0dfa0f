// How many connections the bridge takes on PORT: WebSockets below the open-files limit (L18), and connections that
// have not proved a token yet (L21).
import type { Config } from '../config.js';
import { connectionCap, webSocketCap, type ConnectionCap } from '../ops/accept-failures.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { UnauthenticatedConnections } from '../ws/unauthenticated.js';
import type { Service } from './services.js';

export interface ConnectionBounds {
  /** The open-files limit's cap on connections (undefined: none known). */
  cap: ConnectionCap | undefined;
  /** The WebSocket connections the bridge takes (MAX_CONNECTIONS, below the cap). */
  maxWebSockets: number;
}

/** Measured once the files the bridge keeps open (the database's, Redis's) are: the cap leaves them out. */
export function connectionBounds(maxConnections: number): ConnectionBounds {
  const cap = connectionCap();
  return { cap, maxWebSockets: webSocketCap(maxConnections, cap) };
}

/** Connections to PORT that have not proved a token (L21); behind trusted proxies every one has a proxy's address. */
export function unauthenticatedConnections(
  config: Config,
  deps: { clock: Clock; log: Logger; tls: boolean },
): Service<UnauthenticatedConnections> {
  return {
    name: 'unauthenticated connections',
    start: () =>
      new UnauthenticatedConnections(
        {
          total: config.maxUnauthenticatedConnections,
          perAddress: config.trustProxy > 0 ? 0 : config.maxUnauthenticatedConnectionsPerAddress,
        },
        deps,
      ),
    stop: (unauthenticated) => unauthenticated.stop(),
  };
}
