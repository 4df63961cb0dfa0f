// What a connection to the bridge tells its owner, and the reading of frames behind it: which error explains a
// close, and what can still be said of a frame off the schema.
import { ERRORS, type ErrorCode, type PongMessage } from '../../generated/index.js';

export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** A socket's close: its code, and its reason (or the code of the connection error that announced it). */
export interface CloseInfo {
  code: number;
  reason: string;
}

/** The bridge's explanation of the close that follows: an `error` of connection scope, without event_id. */
export interface ConnectionError {
  code: ErrorCode;
  error: string;
}

/** What can still be read of a frame off the schema, for the owner to tell what it answered. */
export interface InvalidFrame {
  /** Its `type` when that is a string, cut to 32 characters. */
  type: string | undefined;
  /** Its `event_id` when that is a string. */
  eventId: string | undefined;
  /** What is wrong with it, from the validator. */
  problem: string;
}

export function invalidFrame(frame: unknown, problem: string): InvalidFrame {
  const raw: Record<string, unknown> =
    typeof frame === 'object' && frame !== null ? (frame as Record<string, unknown>) : {};
  return {
    type: typeof raw.type === 'string' ? raw.type.slice(0, 32) : undefined,
    eventId: typeof raw.event_id === 'string' ? raw.event_id : undefined,
    problem,
  };
}

/** What the owner of a connection receives: the endpoint's union without the pongs the connection answers itself. */
export type Inbound<In> = Exclude<In, PongMessage>;

export interface ConnectionEvents<In> {
  state: [state: ConnectionState];
  open: [];
  /** The bridge answered the first ping on this socket, which it never does for a refused token: accepted. */
  ready: [];
  /** A frame of the endpoint's union, pongs aside. */
  message: [message: Inbound<In>];
  /** A frame that is JSON but breaks the endpoint's schema. */
  invalid: [frame: InvalidFrame];
  /** The connection went down (it may come back). */
  down: [info: CloseInfo];
  reconnecting: [info: { attempt: number; delayMs: number }];
  /** Given up: closed by the owner, refused for good (a connection error with `retry: false`: UNAUTHORIZED, TOKEN_REVOKED, FORBIDDEN, CONNECTION_REPLACED), or out of retries. */
  closed: [info: CloseInfo];
  pong: [at: number];
}

/** The connection error in a frame, if it is one: an `error` without event_id whose code has connection scope. */
export function connectionErrorIn(m: {
  type: string;
  event_id?: unknown;
  code?: ErrorCode;
  error?: string;
}): ConnectionError | undefined {
  if (m.type !== 'error' || m.event_id !== undefined || m.code === undefined || ERRORS[m.code].scope !== 'connection')
    return undefined;
  return { code: m.code, error: m.error ?? '' };
}
