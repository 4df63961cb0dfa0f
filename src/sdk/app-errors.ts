// The errors an app client hands to its caller: the bridge's own codes (generated catalogue) plus the few
// failures only the client can see, because the bridge never got the chance to report them.
import type { ErrorCode, ErrorMessage } from '../../generated/index.js';

/**
 * Client-side codes, deliberately outside the protocol's `ErrorCode` so that a switch over the catalogue stays
 * exhaustive and no one mistakes them for something the bridge said.
 * - `CONNECTION_LOST`: the connection died (or was closed, or was never up) before the answer came; whether
 *   the event reached the agent is unknown.
 * - `PROTOCOL_ERROR`: the bridge sent a frame that breaks the generated schema; the answer it carried is lost.
 */
export type ClientErrorCode = 'CONNECTION_LOST' | 'PROTOCOL_ERROR';

export type BridgeErrorCode = ErrorCode | ClientErrorCode;

/** The bridge's answers to a `resume` that end its event for the app (R5, R6); StreamGapError carries them. */
export type ResumeErrorCode = Extract<ErrorCode, 'RESUME_GAP' | 'RESUME_REFUSED'>;

export interface BridgeErrorDetails {
  eventId?: string | undefined;
  agentId?: string | undefined;
  /** Only with RATE_LIMIT_EXCEEDED: when the bridge will take the next event. */
  retryAfterSeconds?: number | undefined;
  /** Only when the error came with the close of the connection (handshake refusals, CONNECTION_LOST). */
  closeCode?: number | undefined;
}

/** Any failure of an app client call; `code` says which, `eventId` lets you quote the bridge's event log. */
export class BridgeError extends Error {
  override name = 'BridgeError';
  readonly eventId: string | undefined;
  readonly agentId: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly closeCode: number | undefined;

  constructor(
    readonly code: BridgeErrorCode,
    message: string,
    details: BridgeErrorDetails = {},
  ) {
    super(message);
    this.eventId = details.eventId;
    this.agentId = details.agentId;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.closeCode = details.closeCode;
  }

  /** The bridge's `error` message, as thrown to the caller. */
  static fromMessage(message: ErrorMessage, closeCode?: number): BridgeError {
    return new BridgeError(message.code, message.error, {
      eventId: message.event_id,
      agentId: message.agent_id,
      retryAfterSeconds: message.metadata?.retry_after_seconds,
      closeCode,
    });
  }
}

/**
 * The connection went away with the call still open (or was not up when it was made). A class of its own so that
 * `instanceof ConnectionLostError` reads well in retry logic; `code` is always CONNECTION_LOST.
 */
export class ConnectionLostError extends BridgeError {
  override name = 'ConnectionLostError';
  declare readonly code: 'CONNECTION_LOST';
  /** The close reason (the bridge puts its code there, e.g. HEARTBEAT_TIMEOUT or TOKEN_REVOKED); '' when none. */
  readonly reason: string;

  constructor(message: string, details: { closeCode?: number | undefined; reason?: string | undefined } = {}) {
    super('CONNECTION_LOST', message, { closeCode: details.closeCode });
    this.reason = details.reason ?? '';
  }
}

/**
 * The event was cancelled by its caller (`handle.cancel()`, or the send's `signal` aborted; the cancel extension,
 * S2): its handle ends at once with this error, and nothing more of the event is delivered. `eventId` is unknown
 * when it was cancelled before the bridge accepted it. A class of its own so that a Stop button's own doing is not
 * mistaken for a failure.
 */
export class EventCancelledError extends BridgeError {
  override name = 'EventCancelledError';
  declare readonly code: 'CANCELLED';

  constructor(eventId: string | undefined, agentId?: string | undefined) {
    super(
      'CANCELLED',
      eventId ? `Event ${eventId} was cancelled.` : 'The event was cancelled before it was accepted.',
      {
        eventId,
        agentId,
      },
    );
  }
}

/**
 * A resumed event whose stream can no longer be completed (the resume extension, R6): the bridge no longer keeps
 * what came after the last fragment received (RESUME_GAP: its window ended, it restarted, its bounds dropped
 * fragments, or the node holding the event is gone), or it refused to give the event back (RESUME_REFUSED).
 * The fragments delivered before it are only the start of the answer. A class of its own because, unlike
 * ConnectionLostError, the bridge did answer: the event may well have finished for the agent.
 */
export class StreamGapError extends BridgeError {
  override name = 'StreamGapError';
  declare readonly code: ResumeErrorCode;
  declare readonly eventId: string;

  constructor(code: ResumeErrorCode, message: string, details: { eventId: string; agentId?: string | undefined }) {
    super(code, message, details);
  }
}
