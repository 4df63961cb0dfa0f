// The target app's own connection in a resource case (outside the transcript: it sends thousands of frames).
import WebSocket from 'ws';
import { LIMITS } from '../../../generated/index.js';
import type { ResourceContext } from './types.js';

export interface AppLink {
  ws: WebSocket;
  /** Every frame received, parsed; and how many bytes they came to. */
  frames: Record<string, unknown>[];
  bytes: number;
  closed?: string;
  /** Resolves with the first frame received from now on that matches, or undefined after `ms`. */
  next(match: (f: Record<string, unknown>) => boolean, ms: number): Promise<Record<string, unknown> | undefined>;
}

/** Connects the target app (`?resume=1` when `resumable`); each frame is shown to `keep`, and kept if it says so. */
export function connectApp(
  ctx: ResourceContext,
  options: { resumable?: boolean; keep?: (f: Record<string, unknown>) => boolean } = {},
): Promise<AppLink> {
  ctx.budget.connect();
  const ws = new WebSocket(`${ctx.url.replace(/\/$/, '')}/ws/app${options.resumable ? '?resume=1' : ''}`, {
    headers: { authorization: `Bearer ${ctx.target.appToken}` },
    handshakeTimeout: ctx.timeoutMs,
    perMessageDeflate: false,
    maxPayload: 64 * LIMITS.frameMaxBytes, // an answer past the protocol's frame limit is read, to be reported
  });
  ctx.hold(() => ws.terminate());
  const link: AppLink = { ws, frames: [], bytes: 0, next: () => Promise.resolve(undefined) };
  const waiters = new Set<{
    match: (f: Record<string, unknown>) => boolean;
    resolve: (f: Record<string, unknown>) => void;
  }>();
  ws.on('message', (data: Buffer) => {
    link.bytes += data.length;
    let f: Record<string, unknown>;
    try {
      f = JSON.parse(data.toString()) as Record<string, unknown>;
    } catch {
      return;
    }
    if (!options.keep || options.keep(f)) link.frames.push(f);
    for (const w of waiters)
      if (w.match(f)) {
        waiters.delete(w);
        w.resolve(f);
      }
  });
  link.next = (match, ms) =>
    new Promise((resolve) => {
      const w = { match, resolve: (f: Record<string, unknown> | undefined) => (clearTimeout(timer), resolve(f)) };
      const timer = setTimeout(() => (waiters.delete(w), resolve(undefined)), ms);
      waiters.add(w);
    });
  ws.on('close', (code, reason) => (link.closed = `close ${code} ${reason.toString()}`.trim()));
  ws.on('error', () => {});
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(link));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`the app's upgrade got HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}
