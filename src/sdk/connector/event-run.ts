// One event handed to an agent's handler: the context the handler gets, and the guarantee that the event ends
// with exactly one `reply` or `error` on the wire (§7: agents never stay silent), whatever the handler does.
import {
  LIMITS,
  describeErrors,
  validateAgentErrorMessage,
  validateAgentReplyMessage,
  type AgentErrorMessage,
  type AgentReplyMessage,
  type AgentReplyMetadata,
  type AgentTokenMessage,
} from '../../../generated/index.js';
import type { Clock, Timer } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import { capped, splitByBytes, splitWords } from './fragments.js';
import type { AgentContext, AgentFailureCode } from './handler.js';
import type { Notify } from './notifications.js';

export type AgentFrame = AgentTokenMessage | AgentReplyMessage | AgentErrorMessage;

/** What a run needs of the agent it belongs to. */
export interface RunHost {
  readonly agentId: string;
  /** Sends now, or once the connection is back. */
  send(frame: AgentFrame): void;
  /** The run has ended. */
  forget(eventId: string): void;
}

export interface RunSettings {
  wordsPerFragment: number;
  clock: Clock;
  logger: Logger;
  notify: Notify;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err)) || 'handler failed';

/**
 * What the app reads when the handler throws (C6). An exception's text can carry anything (a stack detail, a key, a
 * customer's data), so it goes to the connector's log only; a text meant for the app goes through ctx.fail().
 */
const HANDLER_FAILED = 'The agent failed while handling the event.';

/** The reason of a handler's `ctx.signal` when the app cancelled the event (S4). */
export class CancelledEventError extends Error {
  override readonly name = 'CancelledEventError';
  constructor(readonly eventId: string) {
    super(`Event ${eventId} was cancelled by the app.`);
  }
}

/** One event in flight: the context handed to the handler, and the guarantee of exactly one ending. */
export class EventRun {
  private finished = false;
  private tokens = 0;
  private timer: Timer | undefined;
  private readonly controller = new AbortController();
  readonly ctx: AgentContext;

  constructor(
    private readonly runner: RunHost,
    private readonly eventId: string,
    private readonly o: RunSettings,
  ) {
    // The context's getters are called on the context: they reach the run through this name.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const run = this;
    this.ctx = {
      agentId: runner.agentId,
      eventId,
      signal: this.controller.signal,
      get finished() {
        return run.finished;
      },
      get tokenCount() {
        return run.tokens;
      },
      token: (text) => (this.ignored('token') ? 0 : this.sendTokens(text)),
      stream: (text, wordsPerFragment = o.wordsPerFragment) => {
        if (this.ignored('stream')) return 0;
        let sent = 0;
        for (const fragment of splitWords(String(text), wordsPerFragment)) sent += this.sendTokens(fragment);
        return sent;
      },
      reply: (content = '', metadata) => {
        if (!this.ignored('reply')) this.reply(content, metadata);
      },
      fail: (code, message) => {
        if (!this.ignored('fail')) this.end(code, message);
      },
    };
  }

  startTimer(ms: number): void {
    this.timer = this.o.clock.setTimer(ms, () => {
      this.timer = undefined;
      this.end('AGENT_TIMEOUT', `The agent did not answer within ${ms} ms.`);
    });
  }

  private ignored(call: string): boolean {
    if (!this.finished) return false;
    this.o.logger.warn(
      { agent_id: this.runner.agentId, event_id: this.eventId, call },
      `ctx.${call}() after the event ended: ignored`,
    );
    return true;
  }

  private sendTokens(text: string): number {
    const pieces = splitByBytes(String(text));
    for (const token of pieces) {
      this.runner.send({ type: 'token', event_id: this.eventId, token });
      this.tokens++;
    }
    return pieces.length;
  }

  private reply(content: string, metadata: AgentReplyMetadata | undefined): void {
    const frame = {
      type: 'reply',
      event_id: this.eventId,
      content,
      done: true,
      ...(metadata !== undefined ? { metadata } : {}),
    };
    if (!validateAgentReplyMessage(frame)) {
      return this.end(
        'AGENT_ERROR',
        `The agent produced an invalid reply: ${describeErrors(validateAgentReplyMessage.errors)}`,
      );
    }
    // A reply reaches the app in one frame, so its text has a limit (L16): over it the bridge would answer
    // REPLY_TOO_LARGE (or, over the frame limit, close the connection), so the event ends here with the reason.
    const textBytes = Buffer.byteLength(JSON.stringify(content)) - 2;
    if (textBytes > LIMITS.replyContentMaxBytes) {
      return this.end(
        'AGENT_ERROR',
        `The agent's reply is ${textBytes} bytes; one reply carries at most ${LIMITS.replyContentMaxBytes}.`,
      );
    }
    if (Buffer.byteLength(JSON.stringify(frame)) > LIMITS.frameMaxBytes) {
      return this.end(
        'AGENT_ERROR',
        `The agent's reply frame is over ${LIMITS.frameMaxBytes} bytes (its metadata is too large) and could not be sent.`,
      );
    }
    this.runner.send(frame);
    this.finish();
    this.o.notify('event-replied', { agentId: this.runner.agentId, eventId: this.eventId, tokenCount: this.tokens });
  }

  /** Ends the event with `error` (unless it has ended already). */
  end(code: AgentFailureCode, message: string): void {
    if (this.finished) return;
    const frame: AgentErrorMessage = {
      type: 'error',
      event_id: this.eventId,
      code: String(code),
      error: capped(String(message)),
    };
    if (!validateAgentErrorMessage(frame)) {
      this.o.logger.warn(
        { agent_id: this.runner.agentId, event_id: this.eventId, code },
        `invalid error code, sent as AGENT_ERROR: ${describeErrors(validateAgentErrorMessage.errors)}`,
      );
      (frame as AgentErrorMessage).code = 'AGENT_ERROR';
    }
    this.runner.send(frame);
    this.finish();
    this.o.notify('event-error', {
      agentId: this.runner.agentId,
      eventId: this.eventId,
      code: frame.code,
      message: frame.error,
    });
  }

  /**
   * The app cancelled the event (S4): it ends here without a frame (the bridge drops any), and the handler's
   * signal fires with a CancelledEventError as its reason.
   */
  cancel(): void {
    if (this.finished) return;
    this.finish(new CancelledEventError(this.eventId));
    this.o.notify('event-cancelled', { agentId: this.runner.agentId, eventId: this.eventId });
  }

  /** Ends the event here without sending anything (the bridge has ended it, or cannot be reached). */
  abandon(code?: string, message?: string): void {
    if (this.finished) return;
    this.finish();
    if (code !== undefined)
      this.o.notify('event-error', {
        agentId: this.runner.agentId,
        eventId: this.eventId,
        code,
        message: message ?? '',
      });
  }

  handlerReturned(): void {
    if (this.finished) return;
    if (this.tokens > 0) this.reply('', undefined);
    else this.end('AGENT_ERROR', 'The agent handler returned without a reply.');
  }

  handlerThrew(err: unknown): void {
    if (this.finished) {
      this.o.logger.warn(
        { agent_id: this.runner.agentId, event_id: this.eventId, err },
        'handler failed after the event ended',
      );
      return;
    }
    this.o.logger.error(
      { agent_id: this.runner.agentId, event_id: this.eventId, err },
      `handler failed: ${errorText(err)}`,
    );
    this.end('AGENT_ERROR', HANDLER_FAILED);
  }

  private finish(reason?: Error): void {
    this.finished = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.runner.forget(this.eventId);
    this.controller.abort(reason);
  }
}
