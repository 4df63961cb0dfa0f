// A test event's app instance (D9): a connection the bridge opens inside itself, to the core a Socket like a
// WebSocket's, whose frames go to an HTTP response as server-sent events. It sends its one event, pings like any
// app (the core closes a silent connection long before the agent timeout), and ends with the reply or an error;
// or, when the operator stops it, cancels its event (S2) as an app's Stop button would.
import { PassThrough, type Writable } from 'node:stream';
import { LIMITS } from '../../generated/index.js';
import { every } from '../core/repeat.js';
import type { ConnectionHandlers, Socket } from '../core/transport.js';
import type { Clock, Timer } from '../shared/clock.js';

/** Negative, so never the id of a WebSocket (the ws adapter counts up from 1) in a log line. */
let nextId = -1;

const PING = JSON.stringify({ type: 'ping' });

export interface InProcessApp {
  /** The server-sent events; ends after the reply or the error (or when the core closes the connection). */
  stream: PassThrough;
  /** The HTTP client went away (the dashboard's Stop): its event in flight is cancelled, then the connection closes. */
  abandon(): void;
}

/**
 * Opens the connection through `open` (the core's: bounds, then handlers), sends `eventFrame` on it, and streams
 * what comes back. `response` is where the stream is piped: its unread bytes count towards the slow-consumer
 * bound like a WebSocket's (W17).
 */
export function inProcessApp(options: {
  clock: Clock;
  open(socket: Socket): ConnectionHandlers;
  eventFrame: string;
  response: Writable;
}): InProcessApp {
  const { clock, response } = options;
  const stream = new PassThrough();
  let handlers: ConnectionHandlers | undefined;
  let ended = false;
  let heartbeat: Timer | undefined;
  /** Its event, once accepted and until it ends: what a Stop cancels. */
  let inFlight: string | undefined;

  /** The stream ends; the core hears the connection close (later, as from a socket). */
  const finish = () => {
    if (ended) return;
    ended = true;
    heartbeat?.cancel();
    stream.end();
    queueMicrotask(() => handlers?.closed());
  };

  const socket: Socket = {
    id: nextId--,
    send(frame) {
      if (ended) return;
      const { type, event_id } = JSON.parse(frame) as { type: string; event_id?: string };
      if (type === 'accepted') inFlight = event_id;
      if (type === 'pong') return; // the answer to this instance's own heartbeat, not news for the operator
      stream.write(`event: ${type}\ndata: ${frame}\n\n`);
      if (type === 'reply' || type === 'error') finish();
    },
    close: finish,
    bufferedBytes: () => stream.writableLength + stream.readableLength + response.writableLength,
  };

  handlers = options.open(socket);
  if (!ended) {
    heartbeat = every(clock, LIMITS.heartbeatIntervalMs, () => {
      stream.write(': heartbeat\n\n'); // a comment: keeps a proxy from cutting a quiet stream, ignored by readers
      handlers!.message(PING, false);
    });
    handlers.message(options.eventFrame, false);
  }
  return {
    stream,
    abandon() {
      if (ended) return;
      ended = true;
      heartbeat?.cancel();
      if (inFlight !== undefined) handlers?.message(JSON.stringify({ type: 'cancel', event_id: inFlight }), false);
      handlers?.closed();
    },
  };
}
