// The target agent's own connection in a resource case (outside the transcript: it streams thousands of fragments).
import type WebSocket from 'ws';
import { opened, targetClient } from './sockets.js';
import type { ResourceContext } from './types.js';

export interface AgentLink {
  ws: WebSocket;
  /** Error codes the bridge sent the agent. */
  errors: string[];
  /** Events delivered to the agent, in order. */
  events: string[];
  /** Resolves with the next delivered event's id, or undefined after `ms`. */
  nextEvent(ms: number): Promise<string | undefined>;
  closed?: string;
}

/** Connects the target agent; `onEvent` hears each event delivered. */
export function connectAgent(ctx: ResourceContext, onEvent?: (eventId: string) => void): Promise<AgentLink> {
  const ws = targetClient(ctx, 'agent');
  const link: AgentLink = { ws, errors: [], events: [], nextEvent: () => Promise.resolve(undefined) };
  let waiting: ((id: string) => void) | undefined;
  ws.on('message', (data) => {
    let f: Record<string, unknown>;
    try {
      f = JSON.parse(data.toString()) as Record<string, unknown>;
    } catch {
      return;
    }
    if (f.type === 'error') link.errors.push(String(f.code));
    if (f.type === 'event' && typeof f.event_id === 'string') {
      link.events.push(f.event_id);
      onEvent?.(f.event_id);
      waiting?.(f.event_id);
    }
  });
  let seen = 0;
  link.nextEvent = (ms) =>
    seen < link.events.length
      ? Promise.resolve(link.events[seen++])
      : new Promise((resolve) => {
          const timer = setTimeout(() => ((waiting = undefined), resolve(undefined)), ms);
          waiting = (id) => {
            clearTimeout(timer);
            waiting = undefined;
            seen++;
            resolve(id);
          };
        });
  return opened(ws, link, 'the agent');
}

/** Sends a frame, counting it against the run's bytes. */
export function sendJson(ctx: ResourceContext, ws: WebSocket, frame: unknown): void {
  const text = JSON.stringify(frame);
  ctx.budget.send(Buffer.byteLength(text));
  ws.send(text);
}
