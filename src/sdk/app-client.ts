// The app side of the bridge: one resilient connection to `{base_url}/ws/app` (heartbeat, backoff and state come
// from BridgeConnection), events sent over it, and their answers paired back to the caller.
//
// Pairing: the bridge answers every `event` frame with exactly one `accepted` or `error`, in the order the
// frames were sent (W7), and the rejection carries a fresh event_id the client has never seen (W6). So the
// first answer goes to the oldest send still waiting for one; from then on the event is known by its
// event_id, which routes its tokens, its reply or its error. `discover` is answered in order too.
import { EventEmitter } from 'node:events';
import {
  describeErrors,
  LIMITS,
  validateErrorCode,
  validateOpenServiceToAppMessage,
  type AcceptedMessage,
  type AgentSummary,
  type AppToServiceMessage,
  type ErrorMessage,
  type Payload,
  type ReplyMessage,
  type ServiceToAppMessage,
} from '../../generated/index.js';
import type { Clock } from '../shared/clock.js';
import { BridgeConnection, type Carrier, type ConnectionOptions, type ConnectionState, type ReconnectOptions } from './connection.js';
import { BridgeError, ConnectionLostError } from './app-errors.js';

export { BridgeError, ConnectionLostError, type BridgeErrorCode, type ClientErrorCode } from './app-errors.js';

/** The connection's options, with `url` the bridge's base URL ending in the version segment (`wss://host/v1`). */
export interface AppClientOptions extends ConnectionOptions {
  /** The bridge's base URL (`wss://host/v1`); the client adds `/ws/app`. */
  url: string;
}

export interface SendInput {
  agentId: string;
  threadId: string;
  /** Opaque to the bridge; relayed to the agent and echoed in the reply. */
  payload: Payload;
}

export type Accepted = Pick<AcceptedMessage, 'event_id' | 'session_key'>;

/**
 * One event, from `send` to its reply. Every part fails with the same BridgeError when the event fails. None of
 * them needs to be awaited: an ignored failure is never an unhandled rejection.
 */
export interface EventHandle {
  /** The bridge took the event; rejects when it refused it (the error's `eventId` is the logged rejection). */
  readonly accepted: Promise<Accepted>;
  /**
   * The token fragments as they arrive; ends after the last one once the reply is in, throws the event's error
   * if it fails. Each iteration starts from the first fragment, so a late reader misses nothing.
   */
  readonly tokens: AsyncIterable<string>;
  /** The final reply; rejects with the event's BridgeError (`code`, `eventId`, `retryAfterSeconds`, …). */
  readonly reply: Promise<ReplyMessage>;
  /** The reply's full text (the bridge joins the fragments when the agent's final content is empty). */
  text(): Promise<string>;
}

export interface AppClientEvents {
  /** Every state change of the underlying connection. */
  state: [state: ConnectionState];
  /** The bridge accepted the token on a (re)opened connection: sends will be answered. */
  connected: [];
  /** The connection went down; events in flight have already failed with ConnectionLostError. */
  disconnected: [info: { code: number; reason: string }];
  /** A reconnect is scheduled after `delayMs`. */
  reconnecting: [info: { attempt: number; delayMs: number }];
  /** Given up for good: closed by you, refused (UNAUTHORIZED, TOKEN_REVOKED, FORBIDDEN) or out of attempts. */
  closed: [info: { code: number; reason: string }];
}

const noop = () => {};

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: Error): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The client's half of one event; the AppClient feeds it the answers that belong to it. */
class PendingEvent implements EventHandle {
  private readonly acceptedD = deferred<Accepted>();
  private readonly replyD = deferred<ReplyMessage>();
  private readonly fragments: string[] = [];
  private ending: { error?: BridgeError } | undefined;
  private wakers: (() => void)[] = [];
  readonly accepted = this.acceptedD.promise;
  readonly reply = this.replyD.promise;
  readonly tokens: AsyncIterable<string> = { [Symbol.asyncIterator]: () => this.iterate() };

  constructor() {
    // Marks the stored promises handled; callers that do await them still see the rejection.
    this.accepted.catch(noop);
    this.reply.catch(noop);
  }

  // An arrow so that `const { text } = handle` still works.
  readonly text = (): Promise<string> => this.reply.then((r) => r.reply);

  get ended(): boolean {
    return this.ending !== undefined;
  }

  accept(message: AcceptedMessage): void {
    this.acceptedD.resolve({ event_id: message.event_id, session_key: message.session_key });
  }

  token(fragment: string): void {
    if (this.ending) return;
    this.fragments.push(fragment);
    this.wake();
  }

  finish(message: ReplyMessage): void {
    if (this.ending) return;
    this.ending = {};
    this.replyD.resolve(message);
    this.wake();
  }

  fail(error: BridgeError): void {
    if (this.ending) return;
    this.ending = { error };
    this.acceptedD.reject(error); // no-op when already accepted
    this.replyD.reject(error);
    this.wake();
  }

  private wake(): void {
    for (const w of this.wakers.splice(0)) w();
  }

  private async *iterate(): AsyncGenerator<string, void, undefined> {
    for (let i = 0; ; ) {
      if (i < this.fragments.length) {
        yield this.fragments[i++]!;
        continue;
      }
      if (this.ending?.error) throw this.ending.error;
      if (this.ending) return;
      await new Promise<void>((resolve) => this.wakers.push(resolve));
    }
  }
}

/** A connected app. Get one from `connectApp`. */
export class AppClient extends EventEmitter<AppClientEvents> {
  /** Sends whose `accepted`/`error` has not come yet, oldest first: the next answer is the head's. */
  private readonly awaitingAnswer: PendingEvent[] = [];
  /** Accepted events, by event_id, until their reply or error. */
  private readonly inFlight = new Map<string, PendingEvent>();
  private readonly discovers: Deferred<AgentSummary[]>[] = [];
  /** The last `error` without event_id: the bridge's explanation of the close that follows it. */
  private connectionError: ErrorMessage | undefined;
  private confirmed = false;
  private closing = false;

  /** @internal Use `connectApp`. */
  constructor(private readonly connection: BridgeConnection) {
    super();
    connection.on('state', (state) => this.emit('state', state));
    connection.on('open', () => {
      this.connectionError = undefined;
      // A refused token is upgraded too (W1), so an open socket proves nothing; the pong to this ping does.
      connection.send({ type: 'ping' } satisfies AppToServiceMessage);
    });
    connection.on('pong', () => {
      if (this.confirmed) return;
      this.confirmed = true;
      this.emit('connected');
    });
    connection.on('message', (message) => this.route(message));
    connection.on('down', (info) => {
      this.confirmed = false;
      this.failAll(this.lostError(info, this.closing ? 'The client was closed' : undefined));
      this.emit('disconnected', info);
    });
    connection.on('reconnecting', (info) => this.emit('reconnecting', info));
    connection.on('closed', (info) => {
      this.confirmed = false;
      this.failAll(this.lostError(info, this.closing ? 'The client was closed' : undefined));
      this.emit('closed', info);
    });
  }

  /** The underlying connection's state; `send` and `discover` work only while it is `open`. */
  get state(): ConnectionState {
    return this.connection.state;
  }

  /** The agents this app may use, online or not (W13). Rejects with ConnectionLostError if the connection drops first. */
  discover(): Promise<AgentSummary[]> {
    if (!this.connection.send({ type: 'discover' } satisfies AppToServiceMessage)) return Promise.reject(this.notConnected('discover'));
    const d = deferred<AgentSummary[]>();
    this.discovers.push(d);
    return d.promise;
  }

  /**
   * Sends one event. Never throws for a runtime condition: when disconnected, the handle fails at once with
   * ConnectionLostError (nothing was sent). A frame larger than LIMITS.frameMaxBytes fails at once with
   * PAYLOAD_TOO_LARGE and no eventId, because the bridge would close the connection (1009) instead of
   * answering it, taking every other event in flight down with it. Throws (TypeError) only for a payload that
   * JSON cannot serialise, which is a bug in the caller rather than a condition to handle.
   */
  send(input: SendInput): EventHandle {
    const event = new PendingEvent();
    const frame: AppToServiceMessage = { type: 'event', agent_id: input.agentId, thread_id: input.threadId, payload: input.payload };
    const bytes = Buffer.byteLength(JSON.stringify(frame), 'utf8');
    if (bytes > LIMITS.frameMaxBytes) {
      event.fail(new BridgeError('PAYLOAD_TOO_LARGE', `The event is ${bytes} bytes of JSON; payloads are limited to ${LIMITS.payloadMaxBytes} bytes. Not sent.`, { agentId: input.agentId }));
    } else if (!this.connection.send(frame)) {
      event.fail(this.notConnected('send the event'));
    } else {
      this.awaitingAnswer.push(event);
    }
    return event;
  }

  /** Closes for good; everything still open fails with ConnectionLostError. Resolves once the socket is closed. */
  close(): Promise<void> {
    if (this.connection.state === 'closed') return Promise.resolve();
    const closed = new Promise<void>((resolve) => this.once('closed', () => resolve()));
    this.closing = true;
    this.connection.close();
    return closed;
  }

  /** @internal What a connection that closed before it was confirmed means to `connectApp`. */
  refusal(info: { code: number; reason: string }): BridgeError {
    const frame = this.connectionError;
    if (validateErrorCode(info.reason)) {
      return new BridgeError(info.reason, frame?.code === info.reason ? frame.error : `The bridge refused the connection: ${info.reason}.`, { closeCode: info.code });
    }
    return this.lostError(info, 'Could not connect to the bridge');
  }

  private route(raw: Record<string, unknown>): void {
    // The open schema: fields and message types of a later protocol version are ignored, not errors (C2).
    if (!validateOpenServiceToAppMessage(raw as unknown)) return this.routeInvalid(raw);
    const message = raw as unknown as ServiceToAppMessage;
    switch (message.type) {
      case 'accepted': {
        const event = this.awaitingAnswer.shift();
        if (!event) return;
        event.accept(message);
        this.inFlight.set(message.event_id, event);
        return;
      }
      case 'error': {
        // No event_id: a connection error announcing the close (or a frame error, which our frames never earn).
        if (message.event_id === undefined) {
          this.connectionError = message;
          return;
        }
        const error = BridgeError.fromMessage(message);
        const event = this.inFlight.get(message.event_id);
        if (event) {
          this.inFlight.delete(message.event_id);
          event.fail(error);
        } else {
          // An id we have never seen: the rejection of the oldest send (W6, W7).
          this.awaitingAnswer.shift()?.fail(error);
        }
        return;
      }
      case 'token':
        this.inFlight.get(message.event_id)?.token(message.token);
        return;
      case 'reply': {
        const event = this.inFlight.get(message.event_id);
        this.inFlight.delete(message.event_id);
        event?.finish(message);
        return;
      }
      case 'agents':
        this.discovers.shift()?.resolve(message.agents);
        return;
      case 'pong':
        return;
    }
  }

  /**
   * A frame that breaks the schema still answers something: dropping it would shift every later answer onto the
   * wrong send, so the call it answers fails with PROTOCOL_ERROR and the pairing stays in step.
   */
  private routeInvalid(frame: unknown): void {
    const raw: Record<string, unknown> = typeof frame === 'object' && frame !== null ? (frame as Record<string, unknown>) : {};
    const type = typeof raw.type === 'string' ? raw.type.slice(0, 32) : 'message';
    const eventId = typeof raw.event_id === 'string' ? raw.event_id : undefined;
    const error = new BridgeError('PROTOCOL_ERROR', `The bridge sent an invalid ${type}: ${describeErrors(validateOpenServiceToAppMessage.errors)}.`, { eventId });
    const event = eventId === undefined ? undefined : this.inFlight.get(eventId);
    if (event) {
      this.inFlight.delete(eventId!);
      event.fail(error);
    } else if (type === 'accepted' || (type === 'error' && eventId !== undefined)) {
      this.awaitingAnswer.shift()?.fail(error);
    } else if (type === 'agents') {
      this.discovers.shift()?.reject(error);
    }
  }

  private failAll(error: BridgeError): void {
    for (const event of this.awaitingAnswer.splice(0)) event.fail(error);
    for (const event of this.inFlight.values()) event.fail(error);
    this.inFlight.clear();
    for (const d of this.discovers.splice(0)) d.reject(error);
  }

  private lostError(info: { code: number; reason: string }, what: string = 'The connection to the bridge was lost'): ConnectionLostError {
    const why = this.connectionError ? `: ${this.connectionError.code}: ${this.connectionError.error}` : info.reason ? `: ${info.reason}` : '';
    return new ConnectionLostError(`${what} (close ${info.code}${why}); the outcome of any unanswered call is unknown.`, { closeCode: info.code, reason: info.reason });
  }

  private notConnected(what: string): ConnectionLostError {
    return new ConnectionLostError(`Cannot ${what}: the client is ${this.connection.state === 'closed' ? 'closed' : 'not connected (' + this.connection.state + ')'}. Nothing was sent.`);
  }
}

/** `{base}/ws/app`, keeping any query the caller put on the base URL. */
function appEndpoint(base: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/ws/app`;
  return url.toString();
}

/**
 * Connects an app and resolves once the bridge has accepted its token. A refused handshake rejects with a
 * BridgeError whose code is UNAUTHORIZED, TOKEN_REVOKED or FORBIDDEN (and `closeCode` 44xx), without retrying.
 * A bridge that cannot be reached is retried with the reconnect policy first; the promise rejects with
 * ConnectionLostError only when that gives up (pass `reconnect: { enabled: false }` to fail on the first try).
 */
export function connectApp(options: AppClientOptions): Promise<AppClient> {
  const connection = new BridgeConnection(
    {
      url: appEndpoint(options.url),
      token: options.token,
      carrier: options.carrier ?? 'header',
      ...(options.reconnect ? { reconnect: options.reconnect } : {}),
      ...(options.heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs: options.heartbeatIntervalMs } : {}),
      ...(options.heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs: options.heartbeatTimeoutMs } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.random ? { random: options.random } : {}),
      ...(options.createSocket ? { createSocket: options.createSocket } : {}),
    },
    LIMITS.appReconnectMaxAttempts,
  );
  const client = new AppClient(connection);
  return new Promise<AppClient>((resolve, reject) => {
    const onConnected = () => {
      client.off('closed', onClosed);
      resolve(client);
    };
    const onClosed = (info: { code: number; reason: string }) => {
      client.off('connected', onConnected);
      reject(client.refusal(info));
    };
    client.once('connected', onConnected);
    client.once('closed', onClosed);
    // start() settles on the socket's open, which a refused token reaches too; the listeners above decide.
    connection.start().catch(noop);
  });
}
