// The target app's own connection in a resource case (outside the transcript: it sends thousands of frames).
import type WebSocket from 'ws';
import { opened, targetClient } from './sockets.js';
import type { ResourceContext } from './types.js';

export interface AppLink {
  ws: WebSocket;
  /** How many bytes the frames received came to. */
  bytes: number;
  closed?: string;
  /** Resolves with the first frame received from now on that matches, or undefined after `ms`. */
  next(match: (f: Record<string, unknown>) => boolean, ms: number): Promise<Record<string, unknown> | undefined>;
}

/** Connects the target app (`?resume=1` when `resumable`); `onFrame` hears each frame received, parsed. */
export function connectApp(
  ctx: ResourceContext,
  options: { resumable?: boolean; onFrame?: (f: Record<string, unknown>) => void } = {},
): Promise<AppLink> {
  const ws = targetClient(ctx, 'app', options.resumable ? '?resume=1' : '');
  const link: AppLink = { ws, bytes: 0, next: () => Promise.resolve(undefined) };
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
    options.onFrame?.(f);
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
  return opened(ws, link, 'the app');
}
