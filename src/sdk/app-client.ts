// The app side of the bridge: one resilient connection to `{base_url}/ws/app` (acceptance, refusal, frame checks,
// heartbeat, backoff and state come from BridgeConnection), events sent over it, and their answers paired back to
// the caller.
//
// Pairing: the bridge answers every `event` frame with exactly one `accepted` or `error`, in the order the
// frames were sent (W7), and the rejection carries a fresh event_id the client has never seen (W6). So the
// first answer goes to the oldest send still waiting for one; from then on the event is known by its
// event_id, which routes its tokens, its reply or its error. `discover` is answered in order too.
//
// Resuming (R9): the client asks every bridge for resumable streams; an event whose `accepted` brought a
// resume_token survives a dropped connection: on the next one the client names it with the last position it
// received, and the bridge sends the rest there. Events without one (from a bridge without the extension) and sends
// not yet accepted end on a drop, as they always have. A resume the bridge refuses for its organization's share
// (TOO_MANY_REQUESTS, F3 and R10) leaves the event as it was: the client sends it again after the time given.
import { EventEmitter } from 'node:events';
import {
  LIMITS,
  validateErrorCode,
  validateOpenServiceToAppMessage,
  type AgentSummary,
  type AppToServiceMessage,
  type ErrorMessage,
  type Payload,
  type ServiceToAppMessage,
} from '../../generated/index.js';
import { systemClock, type Clock, type Timer } from '../shared/clock.js';
import type { ConnectionOptions } from './connection-options.js';
import type { CloseInfo, ConnectionState, Inbound, InvalidFrame } from './connection-events.js';
import { BridgeConnection, BridgeConnectionError } from './connection.js';
import { BridgeError, ConnectionLostError, EventCancelledError } from './app-errors.js';
import { deferred, type Deferred } from './deferred.js';
import { PendingEvent, type EventHandle } from './pending-event.js';
import { InFlightEvent, answersResume, resumeQuery } from './resume.js';

export {
  BridgeError,
  ConnectionLostError,
  EventCancelledError,
  StreamGapError,
  type BridgeErrorCode,
  type ClientErrorCode,
  type ResumeErrorCode,
} from './app-errors.js';
export type { Accepted, EventHandle } from './pending-event.js';

/** The connection's options, with `url` the bridge's base URL ending in the version segment (`wss://host/v1`). */
/** What discover answers: the list, and whether the bridge cut it to fit one frame (W13). */
export type DiscoveredAgents = AgentSummary[] & { readonly incomplete: boolean };

export interface AppClientOptions extends ConnectionOptions {
  /** The bridge's base URL (`wss://host/v1`); the client adds `/ws/app`. */
  url: string;
  /**
   * Resumable streams (default true): the client opens its connections with `?resume=1`, and when one drops it
   * reconnects and takes back the events it waits for, so their tokens and reply go on; only a gap ends one, with
   * StreamGapError. Against a bridge without the extension a drop ends them with ConnectionLostError, as with false.
   */
  resume?: boolean;
}

export interface SendInput {
  agentId: string;
  threadId: string;
  /** Opaque to the bridge; relayed to the agent and echoed in the reply. */
  payload: Payload;
}

export interface SendOptions {
  /** Aborting it cancels the event, as `handle.cancel()` does; already aborted, nothing is sent. */
  signal?: AbortSignal;
}

export interface AppClientEvents {
  /** Every state change of the underlying connection. */
  state: [state: ConnectionState];
  /** The bridge accepted the token on a (re)opened connection: sends will be answered. */
  connected: [];
  /**
   * The connection went down. Events the bridge can give back wait for the next connection; the others (sent and
   * not yet accepted, or accepted by a bridge without the extension) and discovers have failed with ConnectionLostError.
   */
  disconnected: [info: CloseInfo];
  /** A reconnect is scheduled after `delayMs`. */
  reconnecting: [info: { attempt: number; delayMs: number }];
  /** Given up for good: closed by you, refused (a connection error with `retry: false`: UNAUTHORIZED, TOKEN_REVOKED, FORBIDDEN) or out of attempts. */
  closed: [info: CloseInfo];
}

/** A connected app. Get one from `connectApp`. */
export class AppClient extends EventEmitter<AppClientEvents> {
  /** Sends whose `accepted`/`error` has not come yet, oldest first: the next answer is the head's. */
  private readonly awaitingAnswer: PendingEvent[] = [];
  /** Events resumed on the current connection that have had no frame since: a bridge without the extension fails them. */
  private readonly resumedHere = new Set<string>();
  /** Accepted events, by event_id, until their reply or error (also while they wait for a connection to resume on). */
  private readonly inFlight = new Map<string, InFlightEvent>();
  private readonly discovers: Deferred<DiscoveredAgents>[] = [];
  /** Resumes refused for the bridge's load (TOO_MANY_REQUESTS), each waiting to be sent again, by event_id. */
  private readonly resumeRetries = new Map<string, Timer>();
  /** Events this connection cancelled, until the bridge's answer to the cancel: their late frames are ignored. */
  private readonly cancelled = new Set<string>();
  /**
   * Events cancelled while no connection of this client held them on the bridge (dropped and not yet resumed, or
   * their resume refused for the load): a cancel from elsewhere would be refused (S3), so the next connection takes
   * each back with a `resume` and cancels it at once, until the bridge's answer ends it.
   */
  private readonly cancelAfterResume = new Map<string, InFlightEvent>();
  /** Those of them whose resume the bridge refused for the load, each waiting for the time it gave. */
  private readonly cancelRetries = new Map<string, Timer>();
  private closing = false;

  /** @internal Use `connectApp`. */
  constructor(
    private readonly connection: BridgeConnection<ServiceToAppMessage, AppToServiceMessage>,
    private readonly resume: boolean = true,
    private readonly clock: Clock = systemClock,
  ) {
    super();
    connection.on('state', (state) => this.emit('state', state));
    connection.on('ready', () => {
      // Before anyone hears of the connection, so the resumes go out ahead of new sends.
      this.resumeDetached();
      for (const [eventId, held] of this.cancelAfterResume) this.resumeAndCancel(eventId, held);
      this.emit('connected');
    });
    connection.on('message', (message) => this.route(message));
    connection.on('invalid', (frame) => this.routeInvalid(frame));
    connection.on('down', (info) => {
      this.cancelled.clear(); // nothing of them comes on another connection
      cancelTimers(this.cancelRetries); // the next connection tries each at once
      // Whether the connection will come back is known only at 'closed', which follows at once when it will not.
      this.failAll(this.lostError(info, this.closing ? 'The client was closed' : undefined), {
        keepResumable: !this.closing,
      });
      this.emit('disconnected', info);
    });
    connection.on('reconnecting', (info) => this.emit('reconnecting', info));
    connection.on('closed', (info) => {
      cancelTimers(this.cancelRetries);
      this.cancelAfterResume.clear();
      this.failAll(this.lostError(info, this.closing ? 'The client was closed' : undefined));
      this.emit('closed', info);
    });
  }

  /** The underlying connection's state; `send` and `discover` work only while it is `open`. */
  get state(): ConnectionState {
    return this.connection.state;
  }

  /**
   * The agents this app may use, online or not (W13), sorted by agent_id. `incomplete` is true when the bridge cut
   * the list to fit one frame (a very large organization): the rest is in the HTTP directory, after the last
   * agent_id listed. Rejects with ConnectionLostError if the connection drops first.
   */
  discover(): Promise<DiscoveredAgents> {
    if (!this.connection.send({ type: 'discover' } satisfies AppToServiceMessage))
      return Promise.reject(this.notConnected('discover'));
    const d = deferred<DiscoveredAgents>();
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
  send(input: SendInput, options: SendOptions = {}): EventHandle {
    const event = new PendingEvent();
    const { signal } = options;
    if (signal?.aborted) {
      event.fail(new EventCancelledError(undefined, input.agentId));
      return event;
    }
    event.onCancel = () => this.cancel(event, input.agentId);
    if (signal) {
      const abort = () => event.cancel();
      signal.addEventListener('abort', abort, { once: true });
      // Let go of the signal once the event is over, whichever way it ended.
      const release = () => signal.removeEventListener('abort', abort);
      event.reply.then(release, release);
    }
    const frame: AppToServiceMessage = {
      type: 'event',
      agent_id: input.agentId,
      thread_id: input.threadId,
      payload: input.payload,
    };
    const bytes = Buffer.byteLength(JSON.stringify(frame), 'utf8');
    if (bytes > LIMITS.frameMaxBytes) {
      event.fail(
        new BridgeError(
          'PAYLOAD_TOO_LARGE',
          `The event is ${bytes} bytes of JSON; payloads are limited to ${LIMITS.payloadMaxBytes} bytes. Not sent.`,
          { agentId: input.agentId },
        ),
      );
    } else if (!this.connection.send(frame)) {
      event.fail(this.notConnected('send the event'));
    } else {
      this.awaitingAnswer.push(event);
    }
    return event;
  }

  /**
   * The caller cancels the event (S2): it ends for the caller now, and the bridge is asked to end it (at once if it
   * is accepted, else with its `accepted`). An event waiting to be resumed is cancelled by the connection that takes
   * it back: the bridge refuses a cancel from a connection that does not hold the event (S3).
   */
  private cancel(event: PendingEvent, agentId: string): void {
    const { eventId } = event;
    const held = eventId === undefined ? undefined : this.inFlight.get(eventId);
    if (eventId === undefined) event.cancelPending = true;
    else if (held?.event === event) {
      this.inFlight.delete(eventId);
      this.resumedHere.delete(eventId);
      const retrying = this.resumeRetries.get(eventId);
      retrying?.cancel();
      this.resumeRetries.delete(eventId);
      if (!held.detached && !retrying) this.sendCancel(eventId);
      else if (held.resumeFrame()) {
        this.cancelAfterResume.set(eventId, held);
        if (!held.detached) this.resumeAndCancel(eventId, held);
      }
    }
    event.fail(new EventCancelledError(eventId, agentId));
  }

  /** Takes a cancelled event back on this connection and cancels it there: the bridge judges both in order (S2). */
  private resumeAndCancel(eventId: string, held: InFlightEvent): void {
    const frame = held.resumeFrame();
    if (frame && this.connection.send(frame)) this.sendCancel(eventId);
  }

  /**
   * The bridge's answer about an event cancelled while not held: a resume refused for the load is tried again after
   * the time given (the cancel that followed it is refused meanwhile); anything else ends it: CANCELLED, a gap (it
   * ended or cannot be had), or CANCEL_REFUSED after a reply that came first (S8).
   */
  private answeredAfterResume(eventId: string, message: ErrorMessage): void {
    if (message.code === 'TOO_MANY_REQUESTS') {
      return retryAfter(this.clock, this.cancelRetries, eventId, message.metadata?.retry_after_seconds ?? 1, () => {
        const held = this.cancelAfterResume.get(eventId);
        if (held) this.resumeAndCancel(eventId, held);
      });
    }
    this.cancelled.delete(eventId);
    if (message.code === 'CANCEL_REFUSED' && this.cancelRetries.has(eventId)) return;
    this.cancelAfterResume.delete(eventId);
  }

  private sendCancel(eventId: string): void {
    if (this.connection.send({ type: 'cancel', event_id: eventId } satisfies AppToServiceMessage))
      this.cancelled.add(eventId);
  }

  /** Closes for good; everything still open fails with ConnectionLostError. Resolves once the socket is closed. */
  close(): Promise<void> {
    if (this.connection.state === 'closed') return Promise.resolve();
    const closed = new Promise<void>((resolve) => this.once('closed', () => resolve()));
    this.closing = true;
    this.connection.close();
    return closed;
  }

  /** @internal What a connection that closed before it was accepted means to `connectApp`. */
  refusal(info: CloseInfo): BridgeError {
    const frame = this.connection.connectionError;
    if (validateErrorCode(info.reason)) {
      return new BridgeError(
        info.reason,
        frame?.code === info.reason ? frame.error : `The bridge refused the connection: ${info.reason}.`,
        { closeCode: info.code },
      );
    }
    return this.lostError(info, 'Could not connect to the bridge');
  }

  private route(message: Inbound<ServiceToAppMessage>): void {
    switch (message.type) {
      case 'accepted': {
        const event = this.awaitingAnswer.shift();
        if (!event) return;
        event.accept(message);
        if (event.cancelPending) return this.sendCancel(message.event_id);
        this.inFlight.set(message.event_id, InFlightEvent.accepted(event, message, this.resume));
        return;
      }
      case 'error': {
        // No event_id: a connection error announcing the close, which the connection keeps, or a frame error,
        // which our frames never earn but a `resume` sent to a bridge without the extension (a node of an older
        // version in a rolling upgrade, a rollback).
        if (message.event_id === undefined) {
          if (message.code === 'INVALID_MESSAGE') this.resumesNotUnderstood(message.error);
          // A discover refused for the organization's share: discovers are answered in order.
          if (message.code === 'TOO_MANY_REQUESTS') this.discovers.shift()?.reject(BridgeError.fromMessage(message));
          return;
        }
        this.resumedHere.delete(message.event_id);
        if (this.cancelAfterResume.has(message.event_id)) return this.answeredAfterResume(message.event_id, message);
        // The answer to a cancel never answers a send; an event cancelled here has nothing more to say (S2, S8).
        if (message.code === 'CANCELLED' || message.code === 'CANCEL_REFUSED') {
          this.cancelled.delete(message.event_id);
          if (message.code === 'CANCELLED' && this.inFlight.has(message.event_id))
            this.end(message.event_id, new EventCancelledError(message.event_id, message.agent_id));
          return;
        }
        if (this.cancelled.has(message.event_id)) return;
        const event = this.inFlight.get(message.event_id);
        if (message.code === 'TOO_MANY_REQUESTS') {
          // A resume refused for the load, never an event's end nor an answer to a send: taken back later.
          if (event) this.resumeLater(message.event_id, event, message.metadata?.retry_after_seconds ?? 1);
          return;
        }
        if (answersResume(message)) {
          // It ends the resumed event it names, and never answers a send.
          if (event) this.end(message.event_id, event.gap(message)!);
          return;
        }
        const error = BridgeError.fromMessage(message);
        if (event) {
          this.end(message.event_id, error);
        } else {
          // An id we have never seen: the rejection of the oldest send (W6, W7).
          this.awaitingAnswer.shift()?.fail(error);
        }
        return;
      }
      case 'token':
        this.resumedHere.delete(message.event_id);
        this.inFlight.get(message.event_id)?.token(message.token, message.seq);
        return;
      case 'reply': {
        this.resumedHere.delete(message.event_id);
        const event = this.inFlight.get(message.event_id);
        this.inFlight.delete(message.event_id);
        event?.event.finish(message);
        return;
      }
      case 'agents':
        this.discovers.shift()?.resolve(Object.assign(message.agents, { incomplete: message.incomplete === true }));
        return;
    }
  }

  /**
   * A frame that breaks the schema still answers something: dropping it would shift every later answer onto the
   * wrong send, so the call it answers fails with PROTOCOL_ERROR and the pairing stays in step.
   */
  private routeInvalid({ type = 'message', eventId, problem }: InvalidFrame): void {
    const error = new BridgeError('PROTOCOL_ERROR', `The bridge sent an invalid ${type}: ${problem}.`, { eventId });
    const event = eventId === undefined ? undefined : this.inFlight.get(eventId);
    if (event) {
      this.end(eventId!, error);
    } else if (type === 'accepted' || (type === 'error' && eventId !== undefined)) {
      this.awaitingAnswer.shift()?.fail(error);
    } else if (type === 'agents') {
      this.discovers.shift()?.reject(error);
    }
  }

  private end(eventId: string, error: BridgeError): void {
    this.inFlight.get(eventId)?.event.fail(error);
    this.inFlight.delete(eventId);
  }

  /**
   * Fails what a lost connection takes with it; with `keepResumable`, the events the bridge can give back wait for
   * the next connection instead. A send not yet accepted has no resume token, so it is lost either way.
   */
  private failAll(error: BridgeError, { keepResumable = false } = {}): void {
    cancelTimers(this.resumeRetries); // the next connection resumes them, if any
    for (const event of this.awaitingAnswer.splice(0)) event.fail(error);
    for (const [eventId, event] of this.inFlight) {
      if (keepResumable && event.resumable) event.detached = true;
      else this.end(eventId, error);
    }
    for (const d of this.discovers.splice(0)) d.reject(error);
  }

  /** Takes back, on the connection just accepted, every event whose connection dropped (R4). */
  private resumeDetached(): void {
    this.resumedHere.clear();
    for (const [eventId, event] of this.inFlight) {
      if (!event.detached) continue;
      const frame = event.resumeFrame();
      if (frame && this.connection.send(frame)) {
        event.detached = false;
        this.resumedHere.add(eventId);
      }
    }
  }

  /** Sends the event's resume again after `seconds`, on the connection then open; if none is, the next one's. */
  private resumeLater(eventId: string, event: InFlightEvent, seconds: number): void {
    retryAfter(this.clock, this.resumeRetries, eventId, seconds, () => {
      if (this.inFlight.get(eventId) !== event) return;
      const frame = event.resumeFrame();
      if (frame && this.connection.send(frame)) this.resumedHere.add(eventId);
      else event.detached = true;
    });
  }

  /**
   * The bridge answered a `resume` as an unknown message: this connection has no resume extension, so none of the
   * events resumed on it will come back here, and waiting for them would wait for ever (never silent).
   */
  private resumesNotUnderstood(why: string): void {
    for (const eventId of this.resumedHere) {
      this.end(
        eventId,
        new ConnectionLostError(
          `The connection to the bridge was lost, and the bridge reached again does not resume streams (it answered: ${why}); the rest of event ${eventId} is lost.`,
        ),
      );
    }
    this.resumedHere.clear();
  }

  private lostError(info: CloseInfo, what: string = 'The connection to the bridge was lost'): ConnectionLostError {
    const frame = this.connection.connectionError;
    const why = frame ? `: ${frame.code}: ${frame.error}` : info.reason ? `: ${info.reason}` : '';
    return new ConnectionLostError(
      `${what} (close ${info.code}${why}); the outcome of any unanswered call is unknown.`,
      { closeCode: info.code, reason: info.reason },
    );
  }

  private notConnected(what: string): ConnectionLostError {
    return new ConnectionLostError(
      `Cannot ${what}: the client is ${this.connection.state === 'closed' ? 'closed' : 'not connected (' + this.connection.state + ')'}. Nothing was sent.`,
    );
  }
}

/**
 * Runs `action` once `seconds` have passed (a wait the bridge asked for), in place of the one `timers` holds for
 * `eventId`; the timer is let go when it fires.
 */
function retryAfter(clock: Clock, timers: Map<string, Timer>, eventId: string, seconds: number, action: () => void) {
  timers.get(eventId)?.cancel();
  timers.set(
    eventId,
    clock.setTimer(seconds * 1000, () => {
      timers.delete(eventId);
      action();
    }),
  );
}

function cancelTimers(timers: Map<string, Timer>): void {
  for (const timer of timers.values()) timer.cancel();
  timers.clear();
}

/** `{base}/ws/app`, keeping any query the caller put on the base URL but `resume`, which the option decides. */
function appEndpoint(base: string, resume: boolean): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/ws/app`;
  return resumeQuery(url, resume).toString();
}

/**
 * Connects an app and resolves once the bridge has accepted its token. A refused handshake rejects with a
 * BridgeError whose code is UNAUTHORIZED, TOKEN_REVOKED or FORBIDDEN (and `closeCode` 44xx), without retrying.
 * A bridge that cannot be reached is retried with the reconnect policy first; the promise rejects with
 * ConnectionLostError only when that gives up (pass `reconnect: { enabled: false }` to fail on the first try).
 * Later drops are survived by the events in flight when the bridge has the resume extension (`resume`, on by default).
 */
export function connectApp(options: AppClientOptions): Promise<AppClient> {
  const resume = options.resume ?? true;
  const connection = new BridgeConnection<ServiceToAppMessage, AppToServiceMessage>(
    {
      url: appEndpoint(options.url, resume),
      token: options.token,
      carrier: options.carrier ?? 'header',
      ...(options.reconnect ? { reconnect: options.reconnect } : {}),
      ...(options.heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs: options.heartbeatIntervalMs } : {}),
      ...(options.heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs: options.heartbeatTimeoutMs } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.random ? { random: options.random } : {}),
      ...(options.createSocket ? { createSocket: options.createSocket } : {}),
    },
    { validate: validateOpenServiceToAppMessage, maxRetries: LIMITS.appReconnectMaxAttempts },
  );
  const client = new AppClient(connection, resume, options.clock ?? systemClock);
  return connection.start().then(
    () => client,
    (err: BridgeConnectionError) => {
      throw client.refusal({ code: err.closeCode, reason: err.reason });
    },
  );
}
