// One event between its `accepted` and its end (L13-L16): what it holds (its payload, the text streamed so far,
// what is kept for a resume) and the transitions of that state. The event's home node owns it; nothing outside
// changes its fields but through these methods.
import type { Clock, Timer } from '../shared/clock.js';
import type { AppRecord } from './directory.js';
import type { Connection } from './engine.js';
import * as frames from './frames.js';
import type { KeptStream } from './kept-stream.js';
import type { NotKept, StreamedText } from './streamed-text.js';

/**
 * Payloads from this size on are kept as bytes (their own ArrayBuffer, off the V8 heap) while their event is in
 * flight; smaller ones as strings, where a buffer's fixed cost would outweigh them.
 */
const OFF_HEAP_PAYLOAD_BYTES = 1024;

/**
 * What a payload holds (L23): its bytes when kept as bytes; kept as a string (under OFF_HEAP_PAYLOAD_BYTES), two
 * bytes a character, what V8 takes at most. `bytes`: the UTF-8 bytes of the JSON.
 */
export function payloadHeldBytes(payload: string | Buffer, bytes: number): number {
  if (typeof payload !== 'string') return payload.length;
  return bytes < OFF_HEAP_PAYLOAD_BYTES ? payload.length * 2 : bytes;
}

function holdPayload(json: string, bytes: number): string | Buffer {
  if (bytes < OFF_HEAP_PAYLOAD_BYTES) return json;
  const held = Buffer.allocUnsafeSlow(bytes); // not Buffer.from: a pooled slice would pin Node's whole 8 KB pool
  held.write(json, 0, 'utf8');
  return held;
}

/** What an accepted event starts with. */
export interface EventStartFacts {
  eventId: string;
  app: AppRecord;
  appConn: Connection;
  agentId: string;
  threadId: string;
  sessionKey: string;
  payloadJson: string;
  payloadBytes: number;
  receivedAt: number;
  /** `receivedAt` on the monotonic clock: latency_ms is measured from it (W10), whatever the wall clock does. */
  startedAt: number;
  /** What is kept for a resume, when it was sent on a resumable connection (R7). */
  kept: KeptStream | undefined;
}

export class EventInFlight {
  readonly eventId: string;
  readonly app: AppRecord;
  readonly agentId: string;
  readonly threadId: string;
  readonly sessionKey: string;
  readonly receivedAt: number;
  readonly startedAt: number;
  readonly kept: KeptStream | undefined;
  /** The payload's compact JSON, echoed in the reply: from 1 KiB on, as bytes outside the JS heap (L13). */
  private readonly payload: string | Buffer;
  /** The connection its frames go to (another one once resumed, R8). */
  private conn: Connection;
  /** The fragments forwarded so far, for an empty-content reply (W10); null once discarded (L14, L15). */
  private streamed: StreamedText | null;
  private fragments = 0;
  /** Made at the first fragment: most events in a burst of short ones never stream. */
  private prefix: string | undefined;
  private timeout: Timer | undefined;

  constructor(facts: EventStartFacts, text: StreamedText) {
    this.eventId = facts.eventId;
    this.app = facts.app;
    this.agentId = facts.agentId;
    this.threadId = facts.threadId;
    this.sessionKey = facts.sessionKey;
    this.receivedAt = facts.receivedAt;
    this.startedAt = facts.startedAt;
    this.kept = facts.kept;
    this.payload = holdPayload(facts.payloadJson, facts.payloadBytes);
    this.conn = facts.appConn;
    this.streamed = text;
  }

  get appConn(): Connection {
    return this.conn;
  }

  /** Bytes its payload holds (L23). */
  get payloadBytes(): number {
    return payloadHeldBytes(this.payload, this.payload.length);
  }

  get payloadJson(): string {
    return this.payload.toString();
  }

  get fragmentCount(): number {
    return this.fragments;
  }

  /** Whether the streamed text is still kept (an empty-content reply can then stand for it). */
  get text(): StreamedText | null {
    return this.streamed;
  }

  /** Ends the event with `onTimeout` unless it ends first (AGENT_TIMEOUT). */
  startTimer(clock: Clock, ms: number, onTimeout: () => void): void {
    this.timeout = clock.setTimer(ms, onTimeout);
  }

  /** Its frames go to `conn` from now on. */
  moveTo(conn: Connection): void {
    this.conn = conn;
  }

  /** A forwarded fragment, counted and kept; the bound it crossed if it could not be kept (the text then goes). */
  streamedFragment(fragment: string, size: number): NotKept | undefined {
    this.fragments++;
    return this.streamed?.append(fragment, size);
  }

  /** The text streamed so far is let go for good (L14, L15); false if it was already. */
  discardText(): boolean {
    if (!this.streamed) return false;
    this.streamed.release();
    this.streamed = null;
    return true;
  }

  /** The start of its token frames to the app, made once. */
  tokenPrefix(): string {
    return (this.prefix ??= frames.tokenPrefix(this.eventId, this.agentId));
  }

  /** Milliseconds since the event was received, on the monotonic clock (W10). */
  latencyMs(clock: Clock): number {
    return Math.round(clock.monotonic() - this.startedAt);
  }

  /** Its timer and its text are let go: the event is over. */
  finish(): void {
    this.timeout?.cancel();
    this.discardText();
  }
}
