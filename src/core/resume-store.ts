// What a node keeps of its resumable events for a resume (R7): each event's fragments and final frame, while it is
// in flight and for the window after its end, within three bounds: the event's (its fragments), its app's and the
// node's (fragments and final frames together). Over the app's or the node's bound the oldest bytes go first,
// those of ended events before those of events in flight: an ended event is the likelier to have been read
// already, and an event in flight is the one a dropped connection is waiting for.
//
// The bounds count the bytes held, not the text (R7): a fragment's JSON as kept with its index and its share of a
// buffer (resume-buffer.ts), a final message as its UTF-8 bytes in a buffer of its own plus the record of its
// ended event. An ended event is kept for its final message: once that is dropped (a bound, a gap) the event is
// forgotten, so nothing of it stays uncounted; a resume of it is then a gap like that of any event not kept.
import { LIMITS } from '../../generated/index.js';
import type { Clock, Timer } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { BurstLog, LOG_WINDOW_MS } from './burst-log.js';
import { KeptStream, Share, type DropReason } from './kept-stream.js';
import { BUFFER_OVERHEAD_BYTES } from './resume-buffer.js';

/** What an ended event's record costs besides its bytes (its ids, token hash, list entries; measured on Node 20). */
const ENDED_EVENT_BYTES = LIMITS.resumeEndedEventBytes;

export const DROP_REASONS: readonly DropReason[] = ['event_limit', 'app_limit', 'node_limit'];

/** How a resume ended: the label of bridge_resumes_total (limited: TOO_MANY_REQUESTS, F3 and R10). */
export type ResumeOutcome = 'resumed' | 'gap' | 'refused' | 'limited';
export const RESUME_OUTCOMES: readonly ResumeOutcome[] = ['resumed', 'gap', 'refused', 'limited'];

/** What is kept for resumes and what the resumes did (R7), for metrics. */
export interface ResumeStats {
  /** Bytes kept right now, every app together. */
  bytes: number;
  /** Events kept right now: in flight, or ended within their window. */
  events: number;
  dropped: Record<DropReason, number>;
  resumes: Record<ResumeOutcome, number>;
}

export interface ResumeBounds {
  /** How long an ended event is kept (resumeWindowMs). */
  windowMs: number;
  /** The fragments of one event (streamedTextMaxBytes). */
  eventMaxBytes: number;
  /** One app's kept bytes (resumeBufferPerAppMaxBytes). */
  appMaxBytes: number;
  /** The node's kept bytes (resumeBufferMaxBytes). */
  nodeMaxBytes: number;
}

export class ResumeStore {
  private readonly streams = new Map<string, KeptStream>();
  private readonly node: Share;
  private readonly apps = new Map<string, Share>();
  /** Ended streams in the order their window ends (one window for all: the order they ended). */
  private readonly expiring = new Set<KeptStream>();
  private timer: Timer | undefined;
  private readonly droppedLog: BurstLog<DropReason>;
  readonly dropped: Record<DropReason, number> = { event_limit: 0, app_limit: 0, node_limit: 0 };
  readonly resumes: Record<ResumeOutcome, number> = { resumed: 0, gap: 0, refused: 0, limited: 0 };

  constructor(
    private readonly bounds: ResumeBounds,
    private readonly clock: Clock,
    log: Logger,
  ) {
    this.node = new Share(bounds.nodeMaxBytes, 'node_limit');
    // Under a bound, every fragment of every stream may drop bytes: one line per burst, not one per fragment.
    this.droppedLog = new BurstLog({
      clock,
      windowMs: LOG_WINDOW_MS,
      report: (reasons, bytes) =>
        log.info(
          { bytes, reasons: Object.fromEntries(reasons) },
          `resume buffer: ${bytes} bytes dropped to keep its bounds`,
        ),
    });
  }

  /** Starts keeping a resumable event that was just accepted. */
  open(eventId: string, appId: string, agentId: string, tokenHash: string): KeptStream {
    const app = this.shareOf(appId);
    const stream = new KeptStream(eventId, appId, agentId, tokenHash, app);
    this.streams.set(eventId, stream);
    app.streams++;
    return stream;
  }

  get(eventId: string): KeptStream | undefined {
    return this.streams.get(eventId);
  }

  /** Keeps a fragment (its JSON text, counted as what it holds) within the bounds; returns its `seq`. */
  keepFragment(stream: KeptStream, json: string): number {
    const { fragments } = stream;
    if (stream.gapped) return fragments.skip();
    let size = fragments.costOf(json);
    const max = this.bounds.eventMaxBytes;
    if (size > max) {
      this.dropStream(stream, 'event_limit');
      return fragments.skip();
    }
    while (fragments.bytes + size > max) this.release(stream, fragments.dropOldest(), 'event_limit');
    const { app } = stream;
    const { node } = this;
    if ((app.bytes + size > app.max || node.bytes + size > node.max) && !this.makeRoom(stream, size))
      return fragments.skip();
    const before = fragments.bytes;
    const seq = fragments.append(json);
    size = fragments.bytes - before; // its own drops may have emptied the batch it was to join: it opens one
    app.bytes += size;
    node.bytes += size;
    if (!stream.listed) {
      stream.listed = true;
      app.inFlight.add(stream); // one that had lost all its bytes comes back last: its bytes are now the newest
      node.inFlight.add(stream);
    }
    return seq;
  }

  /** The event ended with `frame`: kept with its fragments for the window, unless the bounds leave no room. */
  keepFinal(stream: KeptStream, frame: string): void {
    stream.fragments.seal();
    stream.endedAt = this.clock.monotonic();
    this.unlist(stream);
    const { app } = stream;
    if (stream.bytes > 0) this.listEnded(stream);
    const bytes = Buffer.byteLength(frame, 'utf8');
    const size = bytes + BUFFER_OVERHEAD_BYTES + ENDED_EVENT_BYTES;
    // Room is made while it is not yet ended, so that making it never forgets this very event.
    const room = !stream.gapped && this.makeRoom(stream, size);
    stream.final = null;
    if (!room) return this.forget(stream);
    const kept = Buffer.allocUnsafeSlow(bytes); // its own memory: a slice of Node's pool would pin the pool
    kept.write(frame, 0, 'utf8');
    stream.final = kept;
    stream.finalBytes = size;
    app.bytes += size;
    this.node.bytes += size;
    this.listEnded(stream);
    this.expiring.add(stream);
    this.timer ??= this.clock.setTimer(this.bounds.windowMs, () => this.expire());
  }

  /**
   * RESUME_GAP was sent for it: what it kept is let go. An event in flight stays known (as a gap: its later
   * fragments are numbered and dropped); an ended one is forgotten.
   */
  gap(stream: KeptStream): void {
    stream.gapped = true;
    if (stream.ended) return this.forget(stream);
    this.release(stream, stream.fragments.dropAll());
    this.release(stream, this.takeFinal(stream));
    this.unlist(stream);
  }

  /**
   * Its app cancelled it (S2, S6): what it kept is let go at once, and only the fact that it was cancelled is kept
   * for the window, so that a resume of it is told so.
   */
  cancel(stream: KeptStream): void {
    stream.cancelled = true;
    stream.fragments.seal();
    stream.endedAt = this.clock.monotonic();
    this.release(stream, stream.fragments.dropAll());
    this.release(stream, this.takeFinal(stream));
    this.unlist(stream);
    stream.final = null;
    this.expiring.add(stream);
    this.timer ??= this.clock.setTimer(this.bounds.windowMs, () => this.expire());
  }

  counted(outcome: ResumeOutcome): void {
    this.resumes[outcome]++;
  }

  stats(): ResumeStats {
    return {
      bytes: this.node.bytes,
      events: this.streams.size,
      dropped: { ...this.dropped },
      resumes: { ...this.resumes },
    };
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.droppedLog.stop();
    for (const stream of [...this.streams.values()]) this.forget(stream);
  }

  private shareOf(appId: string): Share {
    let share = this.apps.get(appId);
    if (!share) this.apps.set(appId, (share = new Share(this.bounds.appMaxBytes, 'app_limit')));
    return share;
  }

  /** Room for `size` more bytes of `stream` under its app's bound and the node's; false when even all is too little. */
  private makeRoom(stream: KeptStream, size: number): boolean {
    for (const share of [stream.app, this.node]) {
      if (size > share.max) {
        this.dropStream(stream, share.reason);
        return false;
      }
      if (share.bytes + size > share.max) this.evict(share, share.bytes + size - share.max);
    }
    return true;
  }

  /** Drops the oldest bytes under `share` until `need` are free: ended streams first, then those in flight. */
  private evict(share: Share, need: number): void {
    for (const list of [share.ended, share.inFlight]) {
      for (const stream of list) {
        while (need > 0) {
          const size = stream.fragments.dropOldest() || this.takeFinal(stream);
          if (!size) break;
          this.release(stream, size, share.reason);
          need -= size;
        }
        if (stream.ended && !stream.final) this.forget(stream); // its final message is gone: nothing to resume
        if (need <= 0) return;
      }
    }
  }

  /** Everything `stream` keeps goes (it cannot stay whole under a bound): a resume of it is a gap. */
  private dropStream(stream: KeptStream, reason: DropReason): void {
    this.release(stream, stream.fragments.dropAll(), reason);
    this.release(stream, this.takeFinal(stream), reason);
    if (stream.ended) this.forget(stream);
  }

  private takeFinal(stream: KeptStream): number {
    const size = stream.finalBytes;
    if (stream.final) stream.final = null;
    stream.finalBytes = 0;
    return size;
  }

  private listEnded(stream: KeptStream): void {
    stream.listed = true;
    stream.app.ended.add(stream);
    this.node.ended.add(stream);
  }

  /** `size` bytes of `stream` were let go (dropped under `reason`, or forgotten); it leaves the lists once empty. */
  private release(stream: KeptStream, size: number, reason?: DropReason): void {
    if (size > 0) {
      stream.app.bytes -= size;
      this.node.bytes -= size;
      if (reason) {
        stream.dropped = reason;
        this.dropped[reason] += size;
        this.droppedLog.record(reason, size);
      }
    }
    if (stream.bytes === 0) this.unlist(stream);
  }

  private unlist(stream: KeptStream): void {
    if (!stream.listed) return;
    stream.listed = false;
    stream.app.inFlight.delete(stream);
    stream.app.ended.delete(stream);
    this.node.inFlight.delete(stream);
    this.node.ended.delete(stream);
  }

  private forget(stream: KeptStream): void {
    if (this.streams.get(stream.eventId) !== stream) return; // forgotten already
    this.release(stream, stream.fragments.dropAll());
    this.release(stream, this.takeFinal(stream));
    this.unlist(stream);
    this.streams.delete(stream.eventId);
    this.expiring.delete(stream);
    if (--stream.app.streams === 0) this.apps.delete(stream.appId);
  }

  /** Forgets the streams whose window is over, and waits for the next one's. */
  private expire(): void {
    this.timer = undefined;
    const now = this.clock.monotonic();
    for (const stream of this.expiring) {
      const left = stream.endedAt + this.bounds.windowMs - now;
      if (left > 0) {
        this.timer = this.clock.setTimer(left, () => this.expire());
        return;
      }
      this.forget(stream);
    }
  }
}
