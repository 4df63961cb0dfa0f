// The fragments of one resumable event as they were sent (R7), numbered by `seq` (R3), so that a resume can send
// again exactly those after a position. They are kept as the JSON text of each fragment, which gives back the
// fragment as sent whatever its characters (a lone surrogate is escaped, never turned into U+FFFD), and a batch of
// fragments at a time goes into a Buffer of its own, its index included: the bytes live outside the V8 heap (a node
// keeps up to resumeBufferMaxBytes of them), and the heap holds at most one batch of strings per event (an index
// of JS numbers per batch cost 1.2 KB of heap per 64 fragments; in the buffer it is 8 bytes a fragment).
//
// A fragment counts what it holds here (R7): its JSON text in UTF-8 (escapes as written: 4,096 × U+0001 is 24,578
// bytes, not 4,096), its index, and for the fragment that opens a batch the buffer's own cost; so an empty
// fragment costs its 10 bytes and its share of a buffer, and a flood of them meets the bounds like any other.
import { LIMITS } from '../../generated/index.js';

/** Fragments are written to a buffer once there are this many, or this many UTF-16 units, waiting. */
const BATCH_FRAGMENTS = 32;
const BATCH_CHARS = 1024;
/** Per fragment, at the start of its batch's buffer: where its JSON ends in the batch's text, and its size. */
const INDEX_BYTES = LIMITS.resumeFragmentIndexBytes;
/** What one buffer costs besides its bytes (Buffer, ArrayBuffer; measured on Node 20). */
export const BUFFER_OVERHEAD_BYTES = LIMITS.resumeBufferOverheadBytes;

/**
 * A batch of fragments written out: `count` index entries (end in UTF-16 units of the decoded text, size as
 * counted), then their JSON texts one after another in UTF-8.
 */
interface Batch {
  bytes: Buffer;
  count: number;
  /** The first fragment of the batch still kept (those before it were dropped). */
  start: number;
}

const endOf = (batch: Batch, i: number) => batch.bytes.readUInt32LE(i * INDEX_BYTES);
const sizeOf = (batch: Batch, i: number) => batch.bytes.readUInt32LE(i * INDEX_BYTES + 4);

export class KeptFragments {
  /** The `seq` of the last fragment sent: every fragment gets one, kept or not. */
  sent = 0;
  /** The `seq` of the oldest fragment kept (`sent + 1` when none is). */
  firstKept = 1;
  /** What the fragments kept hold, together (their sizes as counted: see `costOf`). */
  bytes = 0;
  private readonly batches: Batch[] = [];
  private pending: string[] = [];
  private pendingSizes: number[] = [];
  private pendingChars = 0;
  /** Pending fragments dropped already (those before it in `pending`). */
  private pendingStart = 0;

  /** What keeping `json` next would count: its UTF-8 bytes, its index, and a new batch's buffer if it opens one. */
  costOf(json: string): number {
    return (
      Buffer.byteLength(json, 'utf8') +
      INDEX_BYTES +
      (this.pendingStart === this.pending.length ? BUFFER_OVERHEAD_BYTES : 0)
    );
  }

  /** Keeps the next fragment, as the JSON text of its frame; returns its `seq`. `bytes` grows by `costOf(json)`. */
  append(json: string): number {
    const size = this.costOf(json);
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
      size = sizeOf(batch, batch.start++);
      if (batch.start === batch.count) this.batches.shift();
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
      const count = batch.count - batch.start;
      if (seq + count - 1 > after) {
        const text = batch.bytes.toString('utf8', batch.count * INDEX_BYTES);
        for (let i = batch.start; i < batch.count; i++, seq++) {
          if (seq > after) yield [seq, text.slice(i === 0 ? 0 : endOf(batch, i - 1), endOf(batch, i))];
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
    const count = this.pending.length - this.pendingStart;
    const text = this.pending.slice(this.pendingStart).join('');
    const head = count * INDEX_BYTES;
    // allocUnsafeSlow: a buffer of its own, never a slice of Node's shared pool that would pin the whole pool.
    const bytes = Buffer.allocUnsafeSlow(head + Buffer.byteLength(text, 'utf8'));
    let end = 0;
    for (let i = 0; i < count; i++) {
      end += this.pending[this.pendingStart + i]!.length;
      bytes.writeUInt32LE(end, i * INDEX_BYTES);
      bytes.writeUInt32LE(this.pendingSizes[this.pendingStart + i]!, i * INDEX_BYTES + 4);
    }
    bytes.write(text, head, 'utf8');
    this.batches.push({ bytes, count, start: 0 });
    this.clearPending();
  }

  private clearPending(): void {
    this.pending = [];
    this.pendingSizes = [];
    this.pendingChars = 0;
    this.pendingStart = 0;
  }
}
