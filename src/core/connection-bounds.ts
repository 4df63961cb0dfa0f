// Live connections are bounded (L18): the bridge's, each remote address's and each app's, so that one client
// holding sockets open cannot take every descriptor and every byte of heap from the others. An agent needs no
// bound of its own: its token has one connection, a newer one replaces it (L8).
import { LIMITS } from '../../generated/index.js';
import { errorText } from '../shared/error-text.js';
import type { Principal } from './directory.js';

export interface ConnectionLimits {
  /** Every live WebSocket connection (LIMITS.connectionsMax). */
  total: number;
  /** Those from one remote address; 0 turns the bound off (LIMITS.connectionsPerAddressMax). */
  perAddress: number;
  /** Those of one app (LIMITS.connectionsPerAppMax). */
  perApp: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  total: LIMITS.connectionsMax,
  perAddress: LIMITS.connectionsPerAddressMax,
  perApp: LIMITS.connectionsPerAppMax,
};

/** The bound a handshake would cross: the label of bridge_connections_refused_total. */
export type ConnectionBound = 'total' | 'address' | 'app';

export interface Refusal {
  bound: ConnectionBound;
  error: string;
}

function bump(counts: Map<string, number>, key: string, by: 1 | -1): void {
  const n = (counts.get(key) ?? 0) + by;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}

export class ConnectionBounds {
  private total = 0;
  private readonly byAddress = new Map<string, number>();
  private readonly byApp = new Map<string, number>();

  constructor(private readonly limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS) {}

  /** Why one more connection of `principal` from `address` is refused, or undefined when it fits every bound. */
  check(principal: Principal, address: string | undefined): Refusal | undefined {
    const { total, perAddress, perApp } = this.limits;
    if (this.total >= total) {
      return { bound: 'total', error: errorText('TOO_MANY_CONNECTIONS', 'total', { count: this.total }) };
    }
    if (perAddress > 0 && address !== undefined && (this.byAddress.get(address) ?? 0) >= perAddress) {
      return { bound: 'address', error: errorText('TOO_MANY_CONNECTIONS', 'address', { address, count: perAddress }) };
    }
    if (principal.kind === 'app' && (this.byApp.get(principal.app.app_id) ?? 0) >= perApp) {
      return {
        bound: 'app',
        error: errorText('TOO_MANY_CONNECTIONS', 'app', { app_id: principal.app.app_id, count: perApp }),
      };
    }
    return undefined;
  }

  add(principal: Principal, address: string | undefined): void {
    this.count(principal, address, 1);
  }

  remove(principal: Principal, address: string | undefined): void {
    this.count(principal, address, -1);
  }

  /** Whether the app has at least one live connection. */
  hasApp(appId: string): boolean {
    return this.byApp.has(appId);
  }

  /** How many apps have at least one live connection. */
  appCount(): number {
    return this.byApp.size;
  }

  private count(principal: Principal, address: string | undefined, by: 1 | -1): void {
    this.total += by;
    if (address !== undefined) bump(this.byAddress, address, by);
    if (principal.kind === 'app') bump(this.byApp, principal.app.app_id, by);
  }
}
