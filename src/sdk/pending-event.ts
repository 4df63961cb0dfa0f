// One event as the app sees it, from `send` to its reply: the handle the caller holds, fed by the AppClient with
// the answers that belong to it.
import type { AcceptedMessage, ReplyMessage } from '../../generated/index.js';
import type { BridgeError } from './app-errors.js';
import { deferred } from './deferred.js';

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
   * if it fails. Each iteration starts from the first fragment, so a late reader misses nothing. Across a
   * resumed connection it goes on with the next fragment: none is repeated, none is missing (StreamGapError if
   * the bridge can no longer give the rest).
   */
  readonly tokens: AsyncIterable<string>;
  /**
   * The final reply; rejects with the event's BridgeError (`code`, `eventId`, `retryAfterSeconds`, …):
   * StreamGapError when a resumed stream cannot be completed, ConnectionLostError when the connection went
   * and the event could not be taken back.
   */
  readonly reply: Promise<ReplyMessage>;
  /** The reply's full text (the bridge joins the fragments when the agent's final content is empty). */
  text(): Promise<string>;
  /**
   * Stops the event (the cancel extension, S2): `accepted`, `tokens` and `reply` end at once with
   * EventCancelledError, and the bridge is asked to end it and tell its agent (sent once the event is accepted,
   * if it is not yet). Nothing happens for an event that has already ended.
   */
  cancel(): void;
}

const noop = () => {};

/** The client's half of one event; the AppClient feeds it the answers that belong to it. */
export class PendingEvent implements EventHandle {
  private readonly acceptedD = deferred<Accepted>();
  private readonly replyD = deferred<ReplyMessage>();
  private readonly fragments: string[] = [];
  private ending: { error?: BridgeError } | undefined;
  private wakers: (() => void)[] = [];
  /** Its id, once accepted. */
  eventId: string | undefined;
  /** Cancelled before it was accepted: the cancel goes to the bridge with its `accepted`. */
  cancelPending = false;
  /** What `cancel()` does: set by the client that sent it. */
  onCancel: (() => void) | undefined;
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

  readonly cancel = (): void => {
    if (!this.ending) this.onCancel?.();
  };

  /** Whether it has ended (its reply, its error or its cancel). */
  get ended(): boolean {
    return this.ending !== undefined;
  }

  accept(message: AcceptedMessage): void {
    this.eventId = message.event_id;
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
    for (let i = 0; ;) {
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
