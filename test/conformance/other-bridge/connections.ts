// The live side: app and agent connections and the events in flight between them. An event belongs to the agent
// connection it was sent on; when that connection ends (drop, replacement, deactivation) the event ends at once
// with AGENT_OFFLINE, and nothing is ever retried (except under the `retry-after-offline` break).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { quotedEventId, wellFormed } from './agent-frames.js';
import type { BreakName } from './breaks.js';
import type { Clock } from './clock.js';
import type { Client, Registry } from './registry.js';

type Frame = Record<string, unknown>;
type ConnectionCode = 'UNAUTHORIZED' | 'TOKEN_REVOKED' | 'FORBIDDEN';

const PAYLOAD_MAX_BYTES = 64000;
const FRAGMENT_MAX_BYTES = 4096;
const SESSION_KEY_MAX_CHARS = 255;
const AGENT_ID = /^[a-z0-9-]+$/;
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

// Connection errors: one error frame, then 1008 with a sentence for humans (not the code).
const REFUSALS: Record<ConnectionCode, [string, string]> = {
  UNAUTHORIZED: ['the token is wrong, expired or rotated out', 'token not accepted'],
  TOKEN_REVOKED: ['the owner of this token has been deactivated', 'client deactivated'],
  FORBIDDEN: ['this token is for the other endpoint', 'wrong endpoint for this client'],
};

const isObject = (v: unknown): v is Frame => typeof v === 'object' && v !== null && !Array.isArray(v);
const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Sends a frame if the socket is open; `then` runs once it is written (or at once if it cannot be sent). */
function send(ws: WebSocket, frame: Frame, then?: () => void): void {
  if (ws.readyState !== WebSocket.OPEN) return void then?.();
  ws.send(JSON.stringify(frame), () => then?.());
}

export function refuse(ws: WebSocket, code: ConnectionCode): void {
  const [text, reason] = REFUSALS[code];
  send(ws, { type: 'error', code, error: text });
  ws.close(1008, reason);
}

interface AgentLink {
  ws: WebSocket;
  agent: Client;
}

interface Flight {
  id: string;
  app: Client;
  appWs: WebSocket;
  agent: Client;
  link: AgentLink | undefined;
  thread: string;
  payload: Frame;
  sessionKey: string;
  fragments: string[];
  startedAt: number;
  accepted: boolean;
  cancelTimer: () => void;
}

export class Hub {
  #apps = new Map<WebSocket, Client>();
  #agents = new Map<string, AgentLink>();
  #flights = new Map<string, Flight>();
  #parked = new Map<string, Flight[]>(); // only under `retry-after-offline`

  constructor(
    private readonly registry: Registry,
    private readonly clock: Clock,
    private readonly breaks: ReadonlySet<BreakName>,
    private readonly agentTimeoutMs: number,
  ) {}

  isOnline(agentRef: string): boolean {
    return this.#agents.has(agentRef);
  }

  attachApp(ws: WebSocket, app: Client): void {
    this.#apps.set(ws, app);
    ws.on('message', (data) => this.#onApp(ws, app, String(data)));
    ws.on('close', () => this.#apps.delete(ws));
  }

  attachAgent(ws: WebSocket, agent: Client): void {
    const old = this.#agents.get(agent.ref);
    if (old) {
      this.#detach(old);
      old.ws.close(4000, 'replaced');
    }
    const link = { ws, agent };
    this.#agents.set(agent.ref, link);
    ws.on('message', (data) => this.#onAgent(link, String(data)));
    ws.on('close', () => this.#detach(link));
    const parked = this.#parked.get(agent.ref) ?? [];
    this.#parked.delete(agent.ref);
    for (const flight of parked) this.#launch(flight, link);
  }

  /** Closes every live connection of a client (deactivation, organisation removal); its events end at once. */
  evict(ref: string, code: ConnectionCode): void {
    for (const [ws, app] of this.#apps) if (app.ref === ref) refuse(ws, code);
    const link = this.#agents.get(ref);
    if (link) {
      this.#detach(link);
      refuse(link.ws, code);
    }
  }

  #detach(link: AgentLink): void {
    if (this.#agents.get(link.agent.ref) === link) this.#agents.delete(link.agent.ref);
    for (const flight of [...this.#flights.values()]) {
      if (flight.link === link) this.#offline(flight, 'the agent disconnected while handling the event');
    }
  }

  // ---- app side ----

  #onApp(ws: WebSocket, app: Client, raw: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(raw);
    } catch {
      return send(ws, { type: 'error', code: 'INVALID_JSON', error: 'the frame is not JSON' });
    }
    const type = isObject(msg) ? msg['type'] : undefined;
    if (type === 'ping') return this.breaks.has('no-app-pong') ? undefined : this.#pong(ws);
    if (type === 'discover') return send(ws, { type: 'agents', agents: this.#visibleTo(app) });
    if (type === 'event') return this.#submit(ws, app, msg as Frame);
    send(ws, { type: 'error', code: 'INVALID_JSON', error: 'not an app message (type event, discover or ping)' });
  }

  #visibleTo(app: Client): Frame[] {
    return this.registry
      .agentsOf(app.org)
      .filter((a) => this.breaks.has('discover-lists-excluded') || this.registry.mayUse(a, app))
      .map((a) => ({ agent_id: a.ref, name: a.label, description: a.about }));
  }

  #submit(ws: WebSocket, app: Client, msg: Frame): void {
    const id = `evt.${randomUUID()}`;
    const agentId = typeof msg['agent_id'] === 'string' ? msg['agent_id'] : '';
    const thread = msg['thread_id'];
    const payload = msg['payload'];
    const fail = (code: string, error: string): void =>
      send(ws, { type: 'error', event_id: id, agent_id: agentId, code, error });

    if (!AGENT_ID.test(agentId))
      return fail('INVALID_AGENT_ID', 'agent_id must be lowercase letters, digits and hyphens');
    if (typeof thread !== 'string' || thread === '' || CONTROL_CHARS.test(thread)) {
      return fail('INVALID_THREAD_ID', 'thread_id must be a non-empty string without control characters');
    }
    const storedKey = `svc:${agentId}:${app.ref}:${thread}`;
    if ([...storedKey].length > SESSION_KEY_MAX_CHARS && !this.breaks.has('long-session-keys')) {
      return fail(
        'INVALID_THREAD_ID',
        `thread_id too long: the session key would exceed ${SESSION_KEY_MAX_CHARS} characters`,
      );
    }
    if (!isObject(payload)) return fail('INVALID_JSON', 'payload must be a JSON object');
    const size = utf8Bytes(JSON.stringify(payload));
    const tooLarge = this.breaks.has('payload-limit-off-by-one') ? size >= PAYLOAD_MAX_BYTES : size > PAYLOAD_MAX_BYTES;
    if (tooLarge) return fail('PAYLOAD_TOO_LARGE', `payload is ${size} bytes, the limit is ${PAYLOAD_MAX_BYTES}`);
    const agent = this.registry.clients.get(agentId);
    if (!agent || agent.kind !== 'agent' || agent.org !== app.org) return fail('AGENT_NOT_FOUND', 'no such agent');
    if (!this.registry.mayUse(agent, app)) return fail('PERMISSION_DENIED', 'this app is not on the agent allowlist');

    const flight: Flight = {
      id,
      app,
      appWs: ws,
      agent,
      link: undefined,
      thread,
      payload,
      sessionKey: storedKey,
      fragments: [],
      startedAt: performance.now(),
      accepted: false,
      cancelTimer: () => {},
    };
    const link = this.#agents.get(agent.ref);
    if (!link) {
      if (this.breaks.has('retry-after-offline')) this.#park(flight);
      return fail('AGENT_OFFLINE', 'the agent is not connected');
    }
    this.registry.touchSession(agent, app, thread);
    if (this.breaks.has('accepted-after-delivery')) return this.#launch(flight, link);
    if (this.breaks.has('event-before-accepted')) {
      this.#launch(flight, link);
      return void setTimeout(() => this.#accept(flight), 300);
    }
    // The event goes to the agent only once `accepted` has been written to the app.
    this.#accept(flight, () => this.#launch(flight, link));
  }

  #accept(flight: Flight, then?: () => void): void {
    if (flight.accepted) return;
    flight.accepted = true;
    send(
      flight.appWs,
      {
        type: 'accepted',
        event_id: flight.id,
        agent_id: flight.agent.ref,
        session_key: flight.sessionKey,
        status: 'accepted',
        received_at: new Date(this.clock.now()).toISOString(),
      },
      then,
    );
  }

  #launch(flight: Flight, link: AgentLink): void {
    flight.link = link;
    this.#flights.set(flight.id, flight);
    const timeout = this.breaks.has('short-agent-timeout') ? 30000 : this.agentTimeoutMs;
    flight.cancelTimer = this.clock.after(timeout, () =>
      this.#end(flight, 'error', { code: 'AGENT_TIMEOUT', error: `the agent did not answer within ${timeout} ms` }),
    );
    send(link.ws, {
      type: 'event',
      event_id: flight.id,
      app_id: flight.app.ref,
      thread_id: flight.thread,
      session_key: `svc:${flight.app.ref}:${flight.thread}`,
      payload: flight.payload,
    });
  }

  #park(flight: Flight): void {
    this.#parked.set(flight.agent.ref, [...(this.#parked.get(flight.agent.ref) ?? []), flight]);
  }

  #offline(flight: Flight, why: string): void {
    if (this.#end(flight, 'error', { code: 'AGENT_OFFLINE', error: why }) && this.breaks.has('retry-after-offline')) {
      flight.fragments = [];
      this.#park(flight);
    }
  }

  /** Ends an event with its final frame (reply or error). Returns false if it had already ended. */
  #end(flight: Flight, type: 'reply' | 'error', fields: Frame): boolean {
    if (!this.#flights.delete(flight.id)) return false;
    flight.cancelTimer();
    this.#toApp(flight, { type, event_id: flight.id, agent_id: flight.agent.ref, ...fields }, type === 'reply');
    return true;
  }

  /** Answers go to the app instance that sent the event (to all instances only under the break). */
  #toApp(flight: Flight, frame: Frame, fanOut: boolean): void {
    const everyone = fanOut && this.breaks.has('tokens-to-every-instance');
    const targets = everyone
      ? [...this.#apps].filter(([, a]) => a.ref === flight.app.ref).map(([ws]) => ws)
      : [flight.appWs];
    for (const ws of targets) send(ws, frame);
  }

  // ---- agent side ----

  #onAgent(link: AgentLink, raw: string): void {
    const ws = link.ws;
    let msg: unknown;
    // Every error names the event its frame names, and says null when the frame names none it could use.
    const error = (code: string, text: string): void =>
      send(
        ws,
        this.breaks.has('agent-errors-without-code')
          ? { type: 'error', event_id: quotedEventId(msg), error: text }
          : { type: 'error', event_id: quotedEventId(msg), code, error: text },
      );
    try {
      msg = JSON.parse(raw);
    } catch {
      return error('INVALID_JSON', 'the frame is not JSON');
    }
    if (this.breaks.has('mistyped-token-dropped') && isObject(msg) && msg['type'] === 'token')
      if (typeof msg['event_id'] === 'string' && typeof msg['token'] !== 'string') return;
    if (!isObject(msg) || !wellFormed(msg)) {
      error('INVALID_JSON', 'not a valid agent message (token, reply, error or ping with their fields)');
      if (this.breaks.has('drops-agent-on-bad-field')) ws.close(1008, 'invalid message');
      return;
    }
    if (msg['type'] === 'ping') return this.breaks.has('no-agent-pong') ? undefined : this.#pong(ws);

    const eventId = msg['event_id'];
    const flight = typeof eventId === 'string' ? this.#flights.get(eventId) : undefined;
    if (!flight || flight.link !== link) {
      if (!this.breaks.has('unknown-event-ignored'))
        error('INVALID_EVENT_ID', 'no event of yours in flight with this event_id');
      return;
    }
    this.#accept(flight);
    if (msg['type'] === 'token') {
      const token = msg['token'] as string;
      if (utf8Bytes(token) > FRAGMENT_MAX_BYTES)
        return error('MESSAGE_TOO_LARGE', `a fragment may be at most ${FRAGMENT_MAX_BYTES} bytes; dropped`);
      flight.fragments.push(token);
      const frame = {
        type: 'token',
        event_id: flight.id,
        agent_id: flight.agent.ref,
        token,
        seq: flight.fragments.length,
      };
      return this.#toApp(flight, frame, true);
    }
    if (msg['type'] === 'error') {
      const code = msg['code'] === 'AGENT_TIMEOUT' ? 'AGENT_TIMEOUT' : 'AGENT_ERROR';
      return void this.#end(flight, 'error', { code, error: msg['error'] });
    }
    const content = typeof msg['content'] === 'string' ? msg['content'] : ''; // an incomplete reply is a whole one
    const meta = isObject(msg['metadata']) ? msg['metadata'] : {};
    this.#end(flight, 'reply', {
      thread_id: flight.thread,
      reply: content !== '' ? content : flight.fragments.join(''),
      payload: flight.payload,
      metadata: {
        tokens_used: typeof meta['tokens_used'] === 'number' ? meta['tokens_used'] : 0,
        model: typeof meta['model'] === 'string' ? meta['model'] : 'n/a',
        latency_ms: Math.round(performance.now() - flight.startedAt),
        session_key: flight.sessionKey,
      },
    });
  }

  #pong(ws: WebSocket): void {
    send(ws, { type: 'pong', ts: this.clock.now() });
  }
}
