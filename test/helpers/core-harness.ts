// The bridge core without sockets, for the tests of test/core and of cores joined in one process: fake connections
// that check every frame against the generated validators and keep it, the tokens principals carry, and a bridge
// on a frozen clock whose log lines and event outcomes the test can read.
import { describeErrors, type ClientKind, type ErrorCode, type Validator } from '../../generated/index.js';
import { makeBridge, type BridgeOptions } from '../../src/core/bridge.js';
import { hashToken, type AgentRecord, type Directory } from '../../src/core/directory.js';
import type { EventEnd, EventStart } from '../../src/core/observer.js';
import type { ConnectionHandlers, Socket } from '../../src/core/transport.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import type { Logger } from '../../src/shared/logger.js';

export type Frame = Record<string, any>;

export interface Peer extends Socket {
  /** What the core returned when the peer connected: how its frames and its end reach the core. */
  handlers: ConnectionHandlers;
  frames: Frame[];
  /** The raw text of every frame, to measure sizes. */
  texts: string[];
  closedWith?: [number, string];
}

/** The token record a principal of `owner_id` holds. */
/** An agent of organization `org` with the defaults of a new one (TTL 14 days, no allowlist), `extra` on top. */
export const agentRecord = (agent_id: string, extra: Partial<AgentRecord> = {}): AgentRecord => ({
  agent_id,
  org_id: 'org',
  name: agent_id,
  description: '',
  ttl_days: 14,
  allowlist: null,
  active: true,
  created_at: 0,
  ...extra,
});

export const principalToken = (kind: ClientKind, owner_id: string) => ({
  hash: hashToken(owner_id),
  kind,
  owner_id,
  created_at: 0,
  expires_at: null,
});

/**
 * Connects fake peers numbered from 1: `open` hands the socket to a core. With `reportClose`, a socket the core
 * closes reports its end to the core afterwards, as ws does; without it the test says when a connection ends.
 */
export function peerConnector(options: { reportClose?: boolean } = {}) {
  let ids = 0;
  return (validate: Validator<unknown>, open: (socket: Socket) => ConnectionHandlers): Peer => {
    const conn = {
      id: ++ids,
      frames: [] as Frame[],
      texts: [] as string[],
      send(text: string) {
        const frame: Frame = JSON.parse(text);
        if (!validate(frame as unknown))
          throw new Error(`invalid frame ${text.slice(0, 200)}: ${describeErrors(validate.errors)}`);
        conn.frames.push(frame);
        conn.texts.push(text);
      },
      close(code: number, reason: string) {
        conn.closedWith = [code, reason];
        if (options.reportClose) queueMicrotask(() => conn.handlers.closed());
      },
      bufferedBytes: () => 0,
    } as Peer;
    conn.handlers = open(conn);
    return conn;
  };
}

/** A core on a frozen clock at 0, with what it logged at info and the events it refused and ended. */
export function recordingBridge(directory: Directory, options: Partial<BridgeOptions> = {}) {
  const clock = new AdjustableClock({ frozen: true, start: 0 });
  const rejected: [EventStart, ErrorCode][] = [];
  const ended: EventEnd[] = [];
  const logged: [object, string][] = [];
  const log = {
    info: (o: object, m: string) => logged.push([o, m]),
    warn() {},
    error() {},
    debug() {},
  } as unknown as Logger;
  const observer = {
    eventRejected: (e: EventStart, code: ErrorCode) => rejected.push([e, code]),
    eventAccepted() {},
    eventDelivered() {},
    eventFirstFragment() {},
    eventEnded: (e: EventEnd) => ended.push(e),
    sessionOpened() {},
    sessionEvicted() {},
  };
  const bridge = makeBridge({ directory, clock, log, observer, ...options });
  return { bridge, clock, rejected, ended, logged };
}
