// The run's connections (they outlive cases: one per client while it stays open), with the transcript and ledger
// of the case running now, and what the run sends on them: frames, its own events, the replies that end events.
import type { ClientKind } from '../../generated/index.js';
import { Actor, Transcript, type TranscriptLine } from '../actor.js';
import { Ledger } from '../ledger.js';
import type { Profile } from '../scenario.js';
import type { Budget } from './safety.js';

/** A transcript whose lines go to the case running now: connections outlive cases. */
export class CaseTranscript extends Transcript {
  current = new Transcript();
  override add(actor: string, direction: TranscriptLine['direction'], text: string): void {
    this.current.add(actor, direction, text);
  }
}

/** A ledger whose findings go to the case running now. */
export class CaseLedger extends Ledger {
  current = new Ledger();
  override frameProblem(requirement: string, actor: string, reason: string): void {
    this.current.frameProblem(requirement, actor, reason);
  }
  override checked(requirements: Iterable<string>): void {
    this.current.checked(requirements);
  }
}

/** An app and an agent of one organization. */
export interface Fixture {
  appId: string;
  appToken: string;
  agentId: string;
  agentToken: string;
}

export type Frame = { text: string } | { binary: string };
type Match = (f: Record<string, unknown>) => boolean;

export class Connections {
  readonly transcript = new CaseTranscript();
  readonly ledger = new CaseLedger();
  private readonly actors = new Map<string, Actor>();

  constructor(
    private readonly options: { url: string; timeoutMs: number; profile: Profile },
    private readonly budget: Budget,
  ) {}

  /** The named client's connection: the open one, or a new one. */
  async connect(name: string, endpoint: ClientKind, token: string): Promise<Actor> {
    const open = this.actors.get(name);
    if (open?.isOpen) return open;
    this.budget.connect();
    const actor = await Actor.connect({
      name,
      wsBase: this.options.url,
      endpoint,
      token,
      carrier: 'header',
      transcript: this.transcript,
      timeoutMs: this.options.timeoutMs,
      profile: this.options.profile,
      ledger: this.ledger,
    });
    this.actors.set(name, actor);
    return actor;
  }

  send(actor: Actor, frame: Frame): void {
    if ('text' in frame) {
      this.budget.send(Buffer.byteLength(frame.text));
      actor.send(frame.text);
    } else {
      const data = Buffer.from(frame.binary, 'base64');
      this.budget.send(data.length);
      actor.sendBinary(data);
    }
  }

  /** Ends an event an agent was given (its reply), so that nothing stays in flight into the next case. */
  end(agent: Actor, eventId: unknown, content = 'done'): void {
    if (!agent.isOpen) return;
    this.send(agent, { text: JSON.stringify({ type: 'reply', event_id: eventId, content, done: true }) });
  }

  /**
   * Frames left from an earlier case (a late error, a reply) are noted, not judged; an event that reached an agent
   * (a frame the bridge took although the case expected an error, say) is ended by that agent.
   */
  async drain(actor: Actor): Promise<void> {
    while (actor.pending) {
      const f = await actor.next(0).catch(() => undefined);
      if (f?.type === 'event' && actor.endpoint === 'agent') this.end(actor, f.event_id);
    }
  }

  /** The next frame of a type on a connection, skipping others (noted in the transcript); undefined on silence. */
  async waitFor(actor: Actor, match: Match, ms: number): Promise<Record<string, unknown> | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      const leftMs = deadline - Date.now();
      if (leftMs <= 0) return undefined;
      try {
        const f = await actor.next(leftMs);
        if (match(f)) return f;
      } catch {
        return undefined;
      }
    }
  }

  /**
   * Sends an app's event and waits for its answer. A bridge may rate-limit an app (spec/protocol.md#rate-limit:
   * RATE_LIMIT_EXCEEDED with metadata.retry_after_seconds): the run's own events (a case's set-up, the canary) are
   * then sent again after that delay, within `retryMs`; the answer, and the time the accepted one was sent.
   */
  async sendEvent(app: Actor, event: string, retryMs: number) {
    const deadline = performance.now() + retryMs;
    for (;;) {
      const sentAt = performance.now();
      this.send(app, { text: event });
      const answer = await this.waitFor(
        app,
        (f) => f.type === 'accepted' || f.type === 'error',
        this.options.timeoutMs,
      );
      const after = retryAfterMs(answer);
      if (!after || performance.now() + after > deadline) return { answer, sentAt };
      this.transcript.add('suite', 'note', `${app.name} rate-limited: sending its event again in ${after} ms`);
      await new Promise((resolve) => setTimeout(resolve, after));
    }
  }

  /** Ends the named clients' connections (a resource case holds their app and agent itself). */
  release(names: string[], why: string): void {
    for (const name of names) this.actors.get(name)?.terminate(why);
  }

  closeAll(): void {
    for (const a of this.actors.values()) a.terminate('end of the run');
  }
}

/** The delay a RATE_LIMIT_EXCEEDED answer asks for (at least 10 ms), or 0 for any other answer. */
export function retryAfterMs(answer: Record<string, unknown> | undefined): number {
  if (answer?.code !== 'RATE_LIMIT_EXCEEDED') return 0;
  const meta = answer.metadata as { retry_after_seconds?: unknown } | undefined;
  return typeof meta?.retry_after_seconds === 'number' ? Math.round(Math.max(10, meta.retry_after_seconds * 1000)) : 0;
}
