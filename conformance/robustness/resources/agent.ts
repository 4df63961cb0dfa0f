// The target agent's own connection in a resource case (outside the transcript: it streams thousands of fragments).
import WebSocket from 'ws';
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

/** Connects the target agent (not from the hostile address: it is the victim here, not the attacker). */
export function connectAgent(ctx: ResourceContext, onEvent?: (eventId: string) => void): Promise<AgentLink> {
  ctx.budget.connect();
  const ws = new WebSocket(`${ctx.url.replace(/\/$/, '')}/ws/agent`, {
    headers: { authorization: `Bearer ${ctx.target.agentToken}` },
    handshakeTimeout: ctx.timeoutMs,
    perMessageDeflate: false,
  });
  ctx.hold(() => ws.terminate());
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
  ws.on('close', (code, reason) => (link.closed = `close ${code} ${reason.toString()}`.trim()));
  ws.on('error', () => {});
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(link));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`the agent's upgrade got HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Sends a frame, counting it against the run's bytes. */
export function sendJson(ctx: ResourceContext, ws: WebSocket, frame: unknown): void {
  const text = JSON.stringify(frame);
  ctx.budget.send(Buffer.byteLength(text));
  ws.send(text);
}
