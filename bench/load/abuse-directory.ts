// Attacks directory-1k and directory-7k: the scenario registers that many agents with long descriptions in the
// offender's organization (through the admin API); the app asks `discover` again and again, one at a time (each
// once the last was answered or its connection closed, then on a new connection), `count` times or for `timeS`,
// reading each answer: how large the `agents` frame is, how long it takes, and what else the app gets.
import type { WebSocket } from 'ws';
import { auth, bump, frameCode, secondsSince, until, type AbuseConfig, type AbuseResult } from './abuse-common.js';
import { frameType, open } from './common.js';
import { ENDPOINT_PATHS } from '../../generated/index.js';

export async function runDirectory(cfg: AbuseConfig): Promise<AbuseResult> {
  const codes: Record<string, number> = {};
  const counts: Record<string, number> = {
    answers: 0,
    largest_answer_bytes: 0,
    agents_listed: 0,
    slowest_answer_ms: 0,
    reconnects: 0,
  };
  let answered = 0;
  let refused = false;
  let closed = false;
  const connect = async () => {
    const ws = await open(`${cfg.url}${ENDPOINT_PATHS.app}`, auth(cfg.apps[0]!.token), {
      localAddress: cfg.localAddresses[0]!,
      maxPayload: 256 * 2 ** 20,
    });
    closed = false;
    ws.on('message', (data) => {
      const bytes = (data as Buffer).length;
      const text = data.toString();
      const type = frameType(text);
      if (type === 'agents') {
        answered++;
        counts.answers!++;
        counts.largest_answer_bytes = Math.max(counts.largest_answer_bytes!, bytes);
        counts.agents_listed = (JSON.parse(text) as { agents: unknown[] }).agents.length;
      } else if (type === 'error') {
        answered++;
        refused = true;
        bump(codes, `app ${frameCode(text)}`);
      }
    });
    ws.on('close', (code) => {
      closed = true;
      bump(codes, `app close ${code}`);
    });
    return ws;
  };
  let ws: WebSocket = await connect();
  const t0 = performance.now();
  const deadline = t0 + (cfg.timeS ?? 30) * 1000;
  let sent = 0;
  let totalMs = 0;
  while (sent < cfg.count && performance.now() < deadline) {
    if (closed) {
      ws = await connect();
      counts.reconnects!++;
    }
    const before = answered;
    const t = performance.now();
    ws.send('{"type":"discover"}');
    sent++;
    await until(() => answered > before || closed, 30_000);
    const ms = performance.now() - t;
    // An error (SLOW_CONSUMER) comes before its close: the next discover goes on the next connection.
    if (refused) await until(() => closed, 5000);
    refused = false;
    totalMs += ms;
    counts.slowest_answer_ms = Math.max(counts.slowest_answer_ms!, Math.round(ms));
  }
  counts.mean_answer_ms = Math.round(totalMs / Math.max(1, sent));
  const durationS = secondsSince(t0);
  ws.removeAllListeners('close');
  ws.terminate();
  return { attack: cfg.attack, sent, duration_s: durationS, codes, counts };
}
