// Attacks that hold the bridge's door with raw sockets.
//   unfinished-frames  `count` connections of one app token, each sending all but the last byte of one frame of
//                      `frameBytes` (under frameMaxBytes, so the bridge has to wait for the rest) and holding it
//   half-open          `count` anonymous TCP connections, each sending an upgrade request without the blank line
//                      that ends it and holding it (spread over source addresses: ephemeral ports run out)
// Both hold for `holdS` once every connection was tried, counting those the bridge closes meanwhile and when.
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { bump, secondsSince, type AbuseConfig, type AbuseResult } from './abuse-common.js';
import { clientFrame, rawConnect, rawUpgrade, upgradeHead } from './raw-socket.js';
import { ENDPOINT_PATHS } from '../../generated/index.js';

/** Connection attempts under way at once. */
const CONCURRENCY = 100;

/** Counts, per socket once, the bridge closing it: at once (before the hold) or during the hold, and the first such close's second. */
class Closes {
  beforeHold = 0;
  duringHold = 0;
  firstDuringHoldS: number | null = null;
  holdStart: number | null = null;
  watch(socket: Socket, codes: Record<string, number>): void {
    socket.on('data', () => {}); // read and drop what the bridge sends, so that its close is seen
    socket.on('error', (err) =>
      bump(codes, `error ${(err as NodeJS.ErrnoException).code ?? err.message.slice(0, 40)}`),
    );
    socket.once('close', () => {
      if (this.holdStart === null) this.beforeHold++;
      else {
        this.duringHold++;
        this.firstDuringHoldS ??= secondsSince(this.holdStart);
      }
    });
  }
}

async function inWaves<T>(total: number, one: (i: number) => Promise<T | undefined>): Promise<T[]> {
  const out: T[] = [];
  for (let next = 0; next < total;) {
    const wave: Promise<T | undefined>[] = [];
    for (let k = 0; k < CONCURRENCY && next < total; k++, next++) wave.push(one(next));
    for (const x of await Promise.all(wave)) if (x !== undefined) out.push(x);
  }
  return out;
}

async function hold(cfg: AbuseConfig, sockets: Socket[], closes: Closes, counts: Record<string, number>) {
  closes.holdStart = performance.now();
  counts.open_at_hold = sockets.filter((s) => !s.destroyed).length;
  await sleep((cfg.holdS ?? 30) * 1000);
  counts.closed_before_hold = closes.beforeHold;
  counts.closed_during_hold = closes.duringHold;
  if (closes.firstDuringHoldS !== null) counts.first_close_in_hold_s = closes.firstDuringHoldS;
  counts.held_to_end = sockets.filter((s) => !s.destroyed).length;
  for (const s of sockets) s.destroy();
}

export async function runUnfinishedFrames(cfg: AbuseConfig): Promise<AbuseResult> {
  const codes: Record<string, number> = {};
  const counts: Record<string, number> = {};
  const frameBytes = cfg.frameBytes ?? 1_000_000;
  // A valid event's opening, then padding that never ends: the bridge cannot tell it from a slow large frame.
  const payload = Buffer.alloc(frameBytes, 'x');
  payload.write(`{"type":"event","agent_id":"a","thread_id":"t","payload":{"text":"`);
  const partial = clientFrame(payload).subarray(0, -1);
  const closes = new Closes();
  const t0 = performance.now();
  const sockets = await inWaves(cfg.count, async (i) => {
    try {
      const socket = await rawUpgrade(
        cfg.url,
        ENDPOINT_PATHS.app,
        cfg.apps[0]!.token,
        cfg.localAddresses[i % cfg.localAddresses.length]!,
      );
      closes.watch(socket, codes);
      socket.write(partial);
      bump(codes, 'upgraded');
      return socket;
    } catch (err) {
      bump(codes, (err as Error).message.slice(0, 40));
      return undefined;
    }
  });
  // Every partial frame out of this process's buffers: in the kernel's or the bridge's.
  for (
    let deadline = performance.now() + 30_000;
    sockets.some((s) => s.writableLength > 0 && !s.destroyed) && performance.now() < deadline;
  )
    await sleep(20);
  counts.bytes_unsent = sockets.reduce((n, s) => n + (s.destroyed ? 0 : s.writableLength), 0);
  counts.bytes_sent = sockets.length * partial.length - counts.bytes_unsent;
  const durationS = secondsSince(t0);
  console.log(`HOLDING ${sockets.length}`);
  await hold(cfg, sockets, closes, counts);
  return { attack: cfg.attack, sent: sockets.length, duration_s: durationS, codes, counts };
}

export async function runHalfOpen(cfg: AbuseConfig): Promise<AbuseResult> {
  const codes: Record<string, number> = {};
  const counts: Record<string, number> = {};
  const closes = new Closes();
  const half = upgradeHead(cfg.url, ENDPOINT_PATHS.app);
  const t0 = performance.now();
  const sockets = await inWaves(cfg.count, async (i) => {
    try {
      const socket = await rawConnect(cfg.url, cfg.localAddresses[i % cfg.localAddresses.length]!);
      closes.watch(socket, codes);
      socket.write(half);
      bump(codes, 'connected');
      return socket;
    } catch (err) {
      bump(codes, `connect ${(err as NodeJS.ErrnoException).code ?? (err as Error).message.slice(0, 40)}`);
      return undefined;
    }
  });
  const durationS = secondsSince(t0);
  await sleep(500); // the bridge's refusals (over its connection cap: accepted and closed at once) come in
  console.log(`HOLDING ${sockets.length}`);
  await hold(cfg, sockets, closes, counts);
  return { attack: cfg.attack, sent: cfg.count, duration_s: durationS, codes, counts };
}
