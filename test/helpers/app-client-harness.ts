// The app client's fake bridge for the SDK unit tests: frames checked by the generated validator, a client whose
// sockets are FakeSockets the test plays the bridge on, and a frozen AdjustableClock for the heartbeat and backoff.
import { expect } from 'chai';
import WebSocket from 'ws';
import {
  LIMITS,
  validateServiceToAppMessage,
  type AcceptedMessage,
  type ErrorCode,
  type ErrorMessage,
  type ReplyMessage,
  type ServiceToAppMessage,
  type TokenMessage,
} from '../../generated/index.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import {
  BridgeError,
  connectApp,
  type AppClient,
  type AppClientEvents,
  type AppClientOptions,
} from '../../src/sdk/app-client.js';
import { FakeSocket } from './fake-socket.js';

export const TOKEN = `rlk_app-one_${'a1B2'.repeat(8)}`;
export const AGENT = 'tutor';
export const APP = 'app-one';

// Frames typed by the generated types, checked by the generated validator so a fixture can never be off-spec.
export function frame<T extends ServiceToAppMessage>(message: T): T {
  if (!validateServiceToAppMessage(message))
    throw new Error(`test fixture is not a valid frame: ${JSON.stringify(message)}`);
  return message;
}
export const eventId = (n: number) => `01JTESTEVENT${String(n).padStart(14, '0')}`;
export const accepted = (id: string, thread = 't'): AcceptedMessage =>
  frame({
    type: 'accepted',
    event_id: id,
    agent_id: AGENT,
    session_key: `svc:${AGENT}:${APP}:${thread}`,
    status: 'accepted',
  });
/** The `accepted` of a bridge with the resume extension (R2): its resume token, 43 base64url characters. */
export const resumableAccepted = (id: string): AcceptedMessage =>
  frame({ ...accepted(id), resume_token: resumeToken(id) });
export const resumeToken = (id: string): string => Buffer.from(id).toString('base64url').padEnd(43, 'r').slice(0, 43);
/** A fragment; with `seq` as a resumable event's (R3). */
export const token = (id: string, text: string, seq?: number): TokenMessage =>
  frame({ type: 'token', event_id: id, agent_id: AGENT, token: text, ...(seq === undefined ? {} : { seq }) });
export const reply = (id: string, text: string): ReplyMessage =>
  frame({
    type: 'reply',
    event_id: id,
    agent_id: AGENT,
    thread_id: 't',
    reply: text,
    payload: { q: 1 },
    metadata: { tokens_used: 2, model: 'm', latency_ms: 5, session_key: `svc:${AGENT}:${APP}:t` },
  });
export const error = (id: string | undefined, code: ErrorCode, extra: Partial<ErrorMessage> = {}): ErrorMessage =>
  frame({ type: 'error', ...(id ? { event_id: id } : {}), code, error: `bridge says ${code}`, ...extra });

const clients: AppClient[] = [];

export function harness(options: Partial<AppClientOptions> = {}) {
  const clock = new AdjustableClock({ frozen: true, start: Date.parse('2026-11-22T12:00:00.000Z') });
  const sockets: FakeSocket[] = [];
  const all: AppClientOptions = {
    url: 'wss://bridge.test/v1',
    token: TOKEN,
    clock,
    random: () => 0,
    createSocket: (url, headers) => {
      const socket = new FakeSocket(url, headers);
      sockets.push(socket);
      return socket as unknown as WebSocket;
    },
    ...options,
  };
  // Every client that connects is closed after the test (closeClients).
  const connect = () => connectApp(all).then((client) => (clients.push(client), client));
  return { clock, sockets, last: () => sockets.at(-1)!, connect };
}

/** A client whose first connection was opened and confirmed by a pong. */
export async function connected(options: Partial<AppClientOptions> = {}) {
  const h = harness(options);
  const pending = h.connect();
  h.last().open();
  h.last().receive({ type: 'pong' });
  const client = await pending;
  return { ...h, client, socket: h.last() };
}

/** Records the client's events, in order. */
/** Drops the current socket, lets the backoff's first delay pass and confirms the new socket with a pong. */
export function reconnect(h: Awaited<ReturnType<typeof connected>>): FakeSocket {
  const before = h.sockets.length;
  h.last().drop(1006);
  h.clock.advance(LIMITS.reconnectBaseDelayMs);
  expect(h.sockets, 'a new socket after the backoff').to.have.length(before + 1);
  h.last().open();
  h.last().receive({ type: 'pong' });
  return h.last();
}

export function record(client: AppClient) {
  const seen: [keyof AppClientEvents, unknown][] = [];
  for (const name of ['state', 'connected', 'disconnected', 'reconnecting', 'closed'] as const) {
    client.on(name, (...args: unknown[]) => seen.push([name, args[0]]));
  }
  return seen;
}

export async function settled(promise: Promise<unknown>): Promise<'pending' | 'resolved' | 'rejected'> {
  const marker = Symbol('pending');
  try {
    return (await Promise.race([promise, Promise.resolve(marker)])) === marker ? 'pending' : 'resolved';
  } catch {
    return 'rejected';
  }
}

export async function collect(tokens: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const t of tokens) out.push(t);
  return out;
}

/** Iterates until the stream throws; returns what came before and the error. */
export async function collectUntilError(tokens: AsyncIterable<string>): Promise<{ got: string[]; error: BridgeError }> {
  const got: string[] = [];
  try {
    for await (const t of tokens) got.push(t);
  } catch (err) {
    expect(err).to.be.instanceOf(BridgeError);
    return { got, error: err as BridgeError };
  }
  throw new Error(`the token stream ended without an error after ${JSON.stringify(got)}`);
}

/** Closes every client `connected` made (from the suite's afterEach). */
export async function closeClients(): Promise<void> {
  await Promise.all(clients.splice(0).map((c) => c.close()));
}
