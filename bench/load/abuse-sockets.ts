// Attacks on the door rather than the protocol.
//   handshakes               `count` WebSocket handshakes with wrong tokens (half rlk_ on /v1/ws/app, half rla_ on
//                            /v1/ws/agent), 100 at a time; each is answered and closed by the bridge.
//   connections-per-app      `count` connections with one app token, spread over many source addresses (so a bound
//                            per address is not what stops them);
//   connections-per-address  `count` connections from one source address, spread over many app tokens.
// A connection counts as admitted if it is still open after a short hold once every attempt has been made (a
// refusal may come as an error frame and a close right after the handshake).
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { auth, bump, frameCode, type AbuseConfig, type AbuseResult } from './abuse-common.js';
import { ENDPOINT_PATHS } from '../../generated/index.js';

const CONCURRENCY = 100;

/** One connection attempt: resolves once it is open (or failed), with what happened to it so far counted. */
function attempt(
  url: string,
  headers: Record<string, string>,
  localAddress: string,
  codes: Record<string, number>,
  settled: () => boolean,
): Promise<WebSocket | undefined> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers, localAddress, perMessageDeflate: false });
    ws.on('message', (data) => bump(codes, `error ${frameCode(data.toString())}`));
    ws.on('unexpected-response', (_req, res) => {
      bump(codes, `http ${res.statusCode}`);
      res.resume();
      resolve(undefined);
    });
    ws.on('error', (err) => {
      bump(codes, `connect ${(err as NodeJS.ErrnoException).code ?? err.message.slice(0, 40)}`);
      resolve(undefined);
    });
    ws.on('close', (code) => !settled() && bump(codes, `close ${code}`));
    ws.on('open', () => resolve(ws));
  });
}

/** Runs `total` attempts, CONCURRENCY at a time. */
async function inWaves(total: number, one: (i: number) => Promise<WebSocket | undefined>): Promise<WebSocket[]> {
  const opened: WebSocket[] = [];
  for (let next = 0; next < total;) {
    const wave: Promise<WebSocket | undefined>[] = [];
    for (let k = 0; k < CONCURRENCY && next < total; k++, next++) wave.push(one(next));
    for (const ws of await Promise.all(wave)) if (ws) opened.push(ws);
  }
  return opened;
}

export async function runHandshakes(cfg: AbuseConfig): Promise<AbuseResult> {
  const codes: Record<string, number> = {};
  const t0 = performance.now();
  // Each attempt waits for its close too, so that at most CONCURRENCY refused sockets exist at once.
  await inWaves(cfg.count, async (i) => {
    const kind = i % 2 ? 'agent' : 'app';
    const token = `${kind === 'app' ? 'rlk' : 'rla'}_${randomBytes(24).toString('base64url')}`;
    const url = `${cfg.url}${ENDPOINT_PATHS[kind]}`;
    const ws = await attempt(url, auth(token), cfg.localAddresses[i % cfg.localAddresses.length]!, codes, () => false);
    if (ws && ws.readyState !== WebSocket.CLOSED)
      await new Promise<void>((resolve) => ws.once('close', () => resolve()));
    return undefined;
  });
  const durationS = (performance.now() - t0) / 1000;
  return {
    attack: cfg.attack,
    sent: cfg.count,
    duration_s: Number(durationS.toFixed(2)),
    codes,
    counts: { handshakes_per_s: Math.round(cfg.count / durationS) },
  };
}

export async function runConnections(cfg: AbuseConfig): Promise<AbuseResult> {
  const codes: Record<string, number> = {};
  let holding = false;
  const t0 = performance.now();
  const opened = await inWaves(cfg.count, (i) =>
    attempt(
      `${cfg.url}${ENDPOINT_PATHS.app}`,
      auth(cfg.apps[i % cfg.apps.length]!.token),
      cfg.localAddresses[i % cfg.localAddresses.length]!,
      codes,
      () => holding,
    ),
  );
  const connectS = (performance.now() - t0) / 1000;
  const holdMs = (cfg.holdS ?? 2) * 1000;
  await sleep(holdMs);
  const admitted = opened.filter((ws) => ws.readyState === WebSocket.OPEN);
  console.log(`HOLDING ${admitted.length}`);
  await sleep(holdMs); // the scenario samples the bridge holding them all
  holding = true;
  for (const ws of opened) ws.terminate();
  return {
    attack: cfg.attack,
    sent: cfg.count,
    duration_s: Number(connectS.toFixed(2)),
    codes,
    counts: {
      opened: opened.length,
      admitted: admitted.length,
      closed_after_open: opened.length - admitted.length,
      tokens: cfg.apps.length,
      source_addresses: cfg.localAddresses.length,
    },
  };
}
