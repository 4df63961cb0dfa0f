// An agent's reply to an event held here, checked in the order of L16: its content's size (whatever became of the
// app), then whether the app is still there to receive it, then the streamed text an empty content stands for
// (W10, L14), then the whole frame. Refused, the agent learns it and the app gets REPLY_TOO_LARGE in its place.
import { LIMITS, type AgentReplyMessage } from '../../generated/index.js';
import type { Clock } from '../shared/clock.js';
import { errorText } from '../shared/error-text.js';
import type { Logger } from '../shared/logger.js';
import type { Endings } from './endings.js';
import type { EventInFlight } from './event-in-flight.js';
import type { EventTableLimits } from './event-table.js';
import * as frames from './frames.js';
import { utf8Length } from './frames.js';
import type { CoreCounters, ReplyRefusal } from './limit-counters.js';

export interface RepliesDeps {
  endings: Endings;
  clock: Clock;
  log: Logger;
  counters: CoreCounters;
  limits: EventTableLimits;
}

/** Writes a frame to the agent an event belongs to: its socket on this node, or through the engine. */
export type AgentAnswer = (frame: string) => void;

/** Whether `text` is at most `max` UTF-8 bytes; a UTF-16 unit is at most 3 bytes, so short texts are not measured. */
const fitsBytes = (text: string, max: number) => text.length * 3 <= max || utf8Length(text) <= max;

export class Replies {
  constructor(private readonly d: RepliesDeps) {}

  reply(answer: AgentAnswer, ev: EventInFlight, message: AgentReplyMessage): void {
    const { endings } = this.d;
    if (message.content !== '') {
      const replyJson = JSON.stringify(message.content);
      if (!this.fitsReplyText(answer, ev, replyJson)) return;
      return endings.heard(ev) ? this.send(answer, ev, message, replyJson) : this.endUnheard(ev, message);
    }
    if (!endings.heard(ev)) return this.endUnheard(ev, message);
    if (!ev.text) {
      const { textMaxBytes, textPerAgentMaxBytes, textTotalMaxBytes } = this.d.limits;
      const why = errorText('REPLY_TOO_LARGE', 'text_not_kept', {
        event_limit: textMaxBytes,
        agent_limit: textPerAgentMaxBytes,
        node_limit: textTotalMaxBytes,
      });
      return this.refuse(answer, ev, 'text_not_kept', why);
    }
    const replyJson = JSON.stringify(ev.text.text());
    if (this.fitsReplyText(answer, ev, replyJson)) this.send(answer, ev, message, replyJson);
  }

  /** The text as the app's frame carries it, without the quotes, against replyContentMaxBytes; refused if over. */
  private fitsReplyText(answer: AgentAnswer, ev: EventInFlight, replyJson: string): boolean {
    if (fitsBytes(replyJson, LIMITS.replyContentMaxBytes + 2)) return true;
    const bytes = utf8Length(replyJson) - 2;
    const why = errorText('REPLY_TOO_LARGE', 'text_too_large', { bytes, limit: LIMITS.replyContentMaxBytes });
    this.refuse(answer, ev, 'too_large', why);
    return false;
  }

  private send(answer: AgentAnswer, ev: EventInFlight, message: AgentReplyMessage, replyJson: string): void {
    const { clock, endings } = this.d;
    const now = clock.now();
    const tokensUsed = message.metadata?.tokens_used ?? ev.fragmentCount;
    const metadata = {
      tokens_used: tokensUsed,
      model: message.metadata?.model ?? 'unknown',
      latency_ms: ev.latencyMs(clock),
      session_key: ev.sessionKey,
    };
    const about = { event_id: ev.eventId, agent_id: ev.agentId, thread_id: ev.threadId };
    const frame = frames.reply(about, replyJson, ev.payloadJson, metadata);
    // Within replyContentMaxBytes only an outsized metadata.model can still push the frame over (L16).
    if (!fitsBytes(frame, LIMITS.frameMaxBytes)) {
      const why = errorText('REPLY_TOO_LARGE', 'frame_too_large', {
        bytes: utf8Length(frame),
        limit: LIMITS.frameMaxBytes,
      });
      return this.refuse(answer, ev, 'too_large', why);
    }
    endings.end(ev, { outcome: 'replied', code: null, tokens_used: tokensUsed, completed_at: now });
    endings.deliverFinal(ev, frame);
  }

  /** The reply of an event whose app is gone ends it as usual, without building a frame nobody can receive (L15). */
  private endUnheard(ev: EventInFlight, message: AgentReplyMessage): void {
    const tokensUsed = message.metadata?.tokens_used ?? ev.fragmentCount;
    this.d.endings.end(ev, {
      outcome: 'replied',
      code: null,
      tokens_used: tokensUsed,
      completed_at: this.d.clock.now(),
    });
  }

  /** REPLY_TOO_LARGE: the agent learns it in answer to its reply, the app in place of the reply; the event ends. */
  private refuse(answer: AgentAnswer, ev: EventInFlight, reason: ReplyRefusal, why: string): void {
    this.d.counters.repliesRefused[reason]++;
    this.d.log.info({ event_id: ev.eventId, agent_id: ev.agentId, reason }, 'reply refused: too large for one frame');
    answer(frames.agentError('REPLY_TOO_LARGE', errorText('REPLY_TOO_LARGE', 'to_agent', { why }), ev.eventId));
    this.d.endings.fail(ev, 'REPLY_TOO_LARGE', errorText('REPLY_TOO_LARGE', 'to_app', { why }), 'agent_error');
  }
}
