// What the offender's attacks share: their configuration and result, counting codes, and sending no faster than
// a socket takes the bytes.
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { WebSocket } from 'ws';

export type Attack =
  | 'in-flight'
  | 'streaming'
  | 'streaming-app-closes'
  | 'sessions'
  | 'log-flood'
  | 'handshakes'
  | 'connections-per-app'
  | 'connections-per-address'
  | 'unread-100'
  | 'unread-200'
  | 'unfinished-frames'
  | 'half-open'
  | 'resume-replay'
  | 'escaped-fragments'
  | 'empty-fragments'
  | 'directory-1k'
  | 'directory-7k';

export interface AbuseConfig {
  scenario: 'abuse';
  attack: Attack;
  url: string;
  /** The offender's apps (one, but many for connections-per-address) and its agent where the attack needs one. */
  apps: { app_id: string; token: string }[];
  agent?: { agent_id: string; token: string };
  /** Events, frames, handshakes or connections, by attack. */
  count: number;
  payloadBytes?: number;
  /** Frames (resume-replay: replays) awaiting their answer at most (none: as fast as the socket takes them). */
  window?: number;
  /** streaming*: events streamed at once, and the text streamed for each before the empty reply. */
  stream?: { concurrency: number; bytesPerEvent: number };
  /** connections-*: seconds to hold the connections once all are tried (the refusals come in), then again; the
   * attacks that make the bridge hold something: seconds to keep it held once all is sent. */
  holdS?: number;
  /** Seconds the attack sends for at most, whatever is left of `count` (its bound in time). */
  timeS?: number;
  /** The text of each fragment the agent streams (unread-*, resume-replay, escaped-fragments, empty-fragments). */
  fragment?: string;
  /** unfinished-frames: the length of the frame's payload, all of which but the last byte is sent. */
  frameBytes?: number;
  /** Print WAITING and start on SIGUSR2: the process starts while the canary does, the attack when it is ready. */
  waitForGo?: boolean;
  /** Source addresses (loopback), used in turn. */
  localAddresses: string[];
}

export interface AbuseResult {
  attack: Attack;
  sent: number;
  duration_s: number;
  /** What the offender got back: `app CODE` / `agent CODE` error frames, `close N`, `http N`, `connect ERR`. */
  codes: Record<string, number>;
  /** Attack-specific counts (accepted, replies, tokens, admitted connections...). */
  counts: Record<string, number>;
}

export const bump = (m: Record<string, number>, k: string, by = 1) => void (m[k] = (m[k] ?? 0) + by);
/** The `code` of an error frame, without parsing a frame that may be large. */
export const frameCode = (text: string) => /"code":"([A-Z_]+)"/.exec(text)?.[1] ?? 'no code';

/** Bytes a socket may have waiting to be written before the sender yields: enough to keep the link busy. */
const HIGH_WATER = 4 * 2 ** 20;

/** Waits while the socket has too much unsent; yields a turn either way so that answers are read meanwhile. */
export async function room(ws: WebSocket): Promise<void> {
  await nextTurn();
  while (ws.bufferedAmount > HIGH_WATER && ws.readyState === ws.OPEN) await sleep(1);
}

/** Waits until `done()` or `ms` have passed; true if done. */
export async function until(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!done() && performance.now() < deadline) await sleep(5);
  return done();
}

export const auth = (token: string) => ({ authorization: `Bearer ${token}` });

/** Whole seconds since `t0` (performance.now()), to two decimals. */
export const secondsSince = (t0: number) => Number(((performance.now() - t0) / 1000).toFixed(2));
