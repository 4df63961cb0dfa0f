// The fragments of one resumable event as they were sent (R7), numbered by `seq` (R3), so that a resume can send
// again exactly those after a position. They are kept as the JSON text of each fragment, which gives back the
// fragment as sent whatever its characters (a lone surrogate is escaped, never turned into U+FFFD), and a batch of
// fragments at a time goes into a Buffer of its own: the bytes live outside the V8 heap (a node keeps up to
// resumeBufferMaxBytes of them), and the heap holds at most one batch of strings per event.

/** Fragments are written to a buffer once there are this many, or this many UTF-16 units, waiting. */
const BATCH_FRAGMENTS = 64;
const BATCH_CHARS = 2048;

/** A batch of fragments written out: their JSON texts one after another, and where each ends (in UTF-16 units). */
interface Batch {
  bytes: Buffer;
  /** Where each fragment's JSON ends in the decoded text. */
  ends: number[];
  /** Each fragment's size as counted (its UTF-8 bytes), to give back when it is dropped. */
  sizes: number[];
  /** The first fragment of the batch still kept (those before it were dropped). */
  start: number;
}

export class KeptFragments {
  /** The `seq` of the last fragment sent: every fragment gets one, kept or not. */
  sent = 0;
  /** The `seq` of the oldest fragment kept (`sent + 1` when none is). */
  firstKept = 1;
  /** The sizes of the fragments kept, together. */
  bytes = 0;
  private readonly batches: Batch[] = [];
  private pending: string[] = [];
  private pendingSizes: number[] = [];
  private pendingChars = 0;
  /** Pending fragments dropped already (those before it in `pending`). */
  private pendingStart = 0;

  /** Keeps the next fragment, as the JSON text of its frame, counted as `size`; returns its `seq`. */
  append(json: string, size: number): number {
    this.sent++;
    this.pending.push(json);
    this.pendingSizes.push(size);
    this.pendingChars += json.length;
    this.bytes += size;
    if (this.pending.length >= BATCH_FRAGMENTS || this.pendingChars >= BATCH_CHARS) this.seal();
    return this.sent;
  }

  /** Numbers the next fragment without keeping it (it alone is over the event's bound); returns its `seq`. */
  skip(): number {
    this.dropAll();
    this.sent++;
    this.firstKept = this.sent + 1;
    return this.sent;
  }

  /** Drops the oldest fragment kept; returns its size (0 when none is kept). */
  dropOldest(): number {
    const batch = this.batches[0];
    let size: number;
    if (batch) {
      size = batch.sizes[batch.start++]!;
      if (batch.start === batch.ends.length) this.batches.shift();
    } else {
      if (this.pendingStart === this.pending.length) return 0;
      size = this.pendingSizes[this.pendingStart]!;
      this.pending[this.pendingStart++] = '';
      if (this.pendingStart === this.pending.length) this.clearPending();
    }
    this.firstKept++;
    this.bytes -= size;
    return size;
  }

  /** Drops every fragment kept; returns their sizes together. */
  dropAll(): number {
    const bytes = this.bytes;
    this.batches.length = 0;
    this.clearPending();
    this.firstKept = this.sent + 1;
    this.bytes = 0;
    return bytes;
  }

  /** The JSON texts of the fragments kept with a `seq` above `after`, in order, each with its `seq`. */
  *after(after: number): Generator<[seq: number, json: string]> {
    let seq = this.firstKept;
    for (const batch of this.batches) {
      const count = batch.ends.length - batch.start;
      if (seq + count - 1 > after) {
        const text = batch.bytes.toString('utf8');
        for (let i = batch.start; i < batch.ends.length; i++, seq++) {
          if (seq > after) yield [seq, text.slice(i === 0 ? 0 : batch.ends[i - 1], batch.ends[i])];
        }
      } else {
        seq += count;
      }
    }
    for (let i = this.pendingStart; i < this.pending.length; i++, seq++) if (seq > after) yield [seq, this.pending[i]!];
  }

  /** Writes what waits to a buffer (when the event ends: nothing of it stays on the heap for the window). */
  seal(): void {
    if (this.pendingStart === this.pending.length) return this.clearPending();
    const kept = this.pending.slice(this.pendingStart);
    const text = kept.join('');
    const ends: number[] = [];
    let end = 0;
    for (const json of kept) ends.push((end += json.length));
    // allocUnsafeSlow: a buffer of its own, never a slice of Node's shared pool that would pin the whole pool.
    const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text, 'utf8'));
    bytes.write(text, 0, 'utf8');
    this.batches.push({ bytes, ends, sizes: this.pendingSizes.slice(this.pendingStart), start: 0 });
    this.clearPending();
  }

  private clearPending(): void {
    this.pending = [];
    this.pendingSizes = [];
    this.pendingChars = 0;
    this.pendingStart = 0;
  }
}
