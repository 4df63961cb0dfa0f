// Each token with an expiry is expired by the bridge when it falls due (the connections it opened close), on the
// bridge's clock, so the test clock can make it fall due.
import type { Bridge } from '../core/bridge.js';
import type { Directory, TokenRecord } from '../core/directory.js';
import type { Clock, Timer } from '../shared/clock.js';
import type { Service } from './services.js';

export class TokenExpiries {
  /** Once per token: on several nodes, every reload of the registrations offers each rotated token again. */
  private readonly expiring = new Set<string>();
  private readonly timers: Timer[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly expire: (hash: Buffer) => void,
  ) {}

  schedule(token: TokenRecord): void {
    const key = token.hash.toString('hex');
    if (token.expires_at === null || this.expiring.has(key)) return;
    this.expiring.add(key);
    this.timers.push(this.clock.setTimer(token.expires_at - this.clock.now(), () => this.expire(token.hash)));
  }

  /** Schedules every token of the directory's apps and agents. */
  offer(directory: Directory): void {
    for (const owner of [...directory.apps.keys(), ...directory.agents.keys()])
      directory.tokensOf(owner).forEach((token) => this.schedule(token));
  }

  cancel(): void {
    for (const timer of this.timers.splice(0)) timer.cancel();
  }
}

export function tokenExpiries(directory: Directory, bridge: Bridge, clock: Clock): Service<TokenExpiries> {
  return {
    name: 'token expiries',
    start() {
      const expiries = new TokenExpiries(clock, (hash) => bridge.expireToken(hash));
      expiries.offer(directory);
      return expiries;
    },
    stop: (expiries) => expiries.cancel(),
  };
}
