// Robustness mode's safety: the target must be on loopback unless its owner says otherwise, and a run is capped in
// connections, bytes sent and time (printed before it starts); whether the target still answers after a case.
import { PreflightError, probeEndpoint } from '../preflight.js';

/** Enough for every input case and the resource cases at `--scale quick`; `--scale full` needs more, given. */
export const CAP_DEFAULTS = { maxConnections: 2_000, maxBytes: 100_000_000, maxDurationMs: 10 * 60_000 } as const;

export interface Caps {
  maxConnections: number;
  maxBytes: number;
  maxDurationMs: number;
}

/** The target must be on this machine unless its owner says otherwise. */
export function checkLoopback(url: string, iOwnIt: boolean | undefined): void {
  if (iOwnIt) return;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)) return;
  throw new PreflightError(
    `robustness mode sends hostile input: ${host} is not loopback (127.0.0.0/8, ::1, localhost); pass --i-own-this-target to run it against a target you own`,
  );
}

export class CapReached extends Error {}

/** The run's caps, counted as it goes. */
export class Budget {
  connections = 0;
  bytes = 0;
  private readonly started = performance.now();
  constructor(readonly caps: Caps) {}
  get elapsedMs(): number {
    return Math.round(performance.now() - this.started);
  }
  connect(): void {
    if (this.connections + 1 > this.caps.maxConnections)
      throw new CapReached(`the cap of ${this.caps.maxConnections} connections was reached`);
    this.connections++;
  }
  send(bytes: number): void {
    if (this.bytes + bytes > this.caps.maxBytes)
      throw new CapReached(`the cap of ${this.caps.maxBytes} bytes sent was reached`);
    this.bytes += bytes;
  }
  time(): void {
    if (this.elapsedMs >= this.caps.maxDurationMs)
      throw new CapReached(`the cap of ${this.caps.maxDurationMs} ms of run time was reached`);
  }
}

/**
 * Whether the target still answers. The protocol's proof is a new handshake; `/healthz` is this implementation's,
 * not the protocol's, so it counts only where it answers: a 5xx says the target is unwell, and with no connection
 * left in the budget an answer below 500 is the only proof. A target that gives no HTTP answer there is judged by
 * the handshake alone.
 */
export async function targetAlive(url: string, timeoutMs: number, budget: Budget): Promise<boolean> {
  const u = new URL(url);
  const healthy = await fetch(`${u.protocol === 'wss:' ? 'https:' : 'http:'}//${u.host}/healthz`, {
    signal: AbortSignal.timeout(timeoutMs),
  }).then(
    (res) => res.status < 500,
    () => undefined,
  );
  if (healthy === false) return false;
  try {
    budget.connect();
  } catch {
    return healthy === true; // no connection left to prove it: only the health check's answer can
  }
  return probeEndpoint(url, timeoutMs).then(
    () => true,
    () => false,
  );
}
