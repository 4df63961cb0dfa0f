// The app client's half of the resume extension (R1-R9): what it keeps of each accepted event to take it back on a
// new connection after a drop, the position that makes every fragment arrive once, and what the bridge's refusal
// to give an event back means to the caller.
import type { AcceptedMessage, ErrorMessage, ResumeMessage } from '../../generated/index.js';
import { StreamGapError, type ResumeErrorCode } from './app-errors.js';
import type { PendingEvent } from './pending-event.js';

/** The answers to a `resume` frame that end its event; none ever answers an `event` frame (so no pairing by order). */
const RESUME_ERRORS: Record<ResumeErrorCode, true> = { RESUME_GAP: true, RESUME_REFUSED: true };
const isResumeError = (code: string): code is ResumeErrorCode => Object.hasOwn(RESUME_ERRORS, code);

/** `{base}` asking for resumable streams (R1), or plainly, whatever the caller's own query said of it. */
export function resumeQuery(url: URL, resume: boolean): URL {
  if (resume) url.searchParams.set('resume', '1');
  else url.searchParams.delete('resume');
  return url;
}

/** One accepted event until its reply or error. */
export class InFlightEvent {
  /** The last `seq` delivered (R3); 0 before the first fragment. */
  private lastSeq = 0;
  /** Its connection dropped and it waits to be taken back on the next one. */
  detached = false;

  /** `resumeToken` only when the bridge has the extension (R1: its `accepted` says so) and the client asked for it. */
  constructor(
    readonly event: PendingEvent,
    private readonly eventId: string,
    private readonly resumeToken: string | undefined,
  ) {}

  static accepted(event: PendingEvent, message: AcceptedMessage, resume: boolean): InFlightEvent {
    return new InFlightEvent(event, message.event_id, resume ? message.resume_token : undefined);
  }

  /** Whether a drop can be survived; without the extension it ends the event, as it always has. */
  get resumable(): boolean {
    return this.resumeToken !== undefined;
  }

  /**
   * Delivers a fragment unless its position was already delivered: after a resume the bridge starts after the
   * position the client named, so a repeat would be its bug, and the caller must never see a fragment twice.
   * A fragment without a position (a bridge without the extension) is delivered as it comes.
   */
  token(fragment: string, seq: number | undefined): void {
    if (seq !== undefined) {
      if (seq <= this.lastSeq) return;
      this.lastSeq = seq;
    }
    this.event.token(fragment);
  }

  /** The frame that takes the event back after everything delivered so far (R4). */
  resumeFrame(): ResumeMessage | undefined {
    if (this.resumeToken === undefined) return undefined;
    return { type: 'resume', event_id: this.eventId, resume_token: this.resumeToken, after_seq: this.lastSeq };
  }

  /**
   * The caller's error for the bridge's answer to a resume, or undefined when `message` is not one. A refusal is a
   * gap too for the caller: the client resumes only its own events with their own token, so the rest of the
   * stream cannot be had either way.
   */
  gap(message: ErrorMessage): StreamGapError | undefined {
    const { code } = message;
    if (!isResumeError(code)) return undefined;
    const text =
      code === 'RESUME_GAP'
        ? `${message.error} The stream stops after fragment ${this.lastSeq}; the rest of the answer is lost.`
        : `Event ${this.eventId}'s stream cannot be completed after fragment ${this.lastSeq}: the bridge refused to resume it (${message.error})`;
    return new StreamGapError(code, text, { eventId: this.eventId, agentId: message.agent_id });
  }
}

/** Whether an `error` with an event_id answers a `resume`, not an `event`. */
export function answersResume(message: ErrorMessage): boolean {
  return isResumeError(message.code);
}
