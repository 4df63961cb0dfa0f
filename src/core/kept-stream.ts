// One resumable event as the resume store keeps it (R7), and the shares of the bounds its bytes count in.
import { KeptFragments } from './resume-buffer.js';

/** Which bound dropped kept bytes: the label of bridge_resume_dropped_bytes_total. */
export type DropReason = 'event_limit' | 'app_limit' | 'node_limit';

/** One resumable event as kept: who may take it back, what it sent, and how it ended. */
export class KeptStream {
  readonly fragments = new KeptFragments();
  /** The reply or error frame, as UTF-8 off the heap: undefined while in flight, null once dropped (or never kept). */
  final: Buffer | null | undefined = undefined;
  /** What the final frame counts: its bytes, its buffer and the ended event's record. */
  finalBytes = 0;
  /** The bound that last dropped something of it, for the text of RESUME_GAP. */
  dropped: DropReason | undefined;
  /** RESUME_GAP was sent for it: the event is over for its app, and nothing more of it is kept. */
  gapped = false;
  /** Its app cancelled it (S6): nothing of it is kept, and a resume of it is RESUME_GAP `cancelled`. */
  cancelled = false;
  endedAt = 0;
  /** In its app's and the node's lists of streams holding bytes (checked per fragment rather than adding again). */
  listed = false;

  constructor(
    readonly eventId: string,
    readonly appId: string,
    readonly agentId: string,
    /** The SHA-256 of its resume token, in base64 (R2). */
    readonly tokenHash: string,
    /** Its app's share of the bounds (found once, not per fragment). */
    readonly app: Share,
  ) {}

  /** The final frame as it is sent again. */
  finalFrame(): string | undefined {
    return this.final ? this.final.toString('utf8') : undefined;
  }

  get ended(): boolean {
    return this.final !== undefined;
  }

  get bytes(): number {
    return this.fragments.bytes + this.finalBytes;
  }
}

/** The kept bytes under one bound, and the streams that hold some of them, oldest first. */
export class Share {
  bytes = 0;
  /** Streams under this share (for an app: to know when it holds none). */
  streams = 0;
  readonly ended = new Set<KeptStream>();
  readonly inFlight = new Set<KeptStream>();

  constructor(
    readonly max: number,
    readonly reason: DropReason,
  ) {}
}
