// The streamed text the bridge keeps for an event's reply when the agent's content is empty (W10), bounded per
// event and per agent (L14). It is kept as UTF-8 in one growing Buffer: the bytes live outside the V8 heap (whose
// ~4 GB limit, not the machine's memory, is what a long stream used to exhaust), and an event holds one buffer and
// at most one batch of fragments on the heap however long it streams.

/**
 * Bytes shared by kept texts: one agent's events (`agent_limit`), within those of the whole node (`node_limit`,
 * the budget's parent). What their buffers hold, grown or not, counts in both.
 */
export class ByteBudget {
  used = 0;

  constructor(
    readonly max: number,
    private readonly bound: Exclude<NotKept, 'event_limit'>,
    private readonly parent?: ByteBudget,
  ) {}

  /** Takes `bytes` from this budget and its parent, or says which of them has no room (taking nothing). */
  take(bytes: number): NotKept | undefined {
    if (this.used + bytes > this.max) return this.bound;
    const refused = this.parent?.take(bytes);
    if (refused) return refused;
    this.used += bytes;
    return undefined;
  }

  give(bytes: number): void {
    this.used -= bytes;
    this.parent?.give(bytes);
  }
}

/** Why a fragment was not kept; the caller then discards the whole text, never keeping a part of it. */
export type NotKept = 'event_limit' | 'agent_limit' | 'node_limit';

const EMPTY = Buffer.alloc(0);
const FIRST_CAPACITY = 4096;
/** A held-back high surrogate, as measured alone (U+FFFD's 3 bytes). */
const HELD_BYTES = 3;
/** Pending fragments are written once there are this many, or this many UTF-16 units: a few KB of heap at most. */
const BATCH_FRAGMENTS = 32;
const BATCH_CHARS = 512;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

export class StreamedText {
  private buf: Buffer = EMPTY;
  private used = 0;
  /** UTF-8 bytes of the fragments kept, each measured alone: what `maxBytes` bounds. */
  private textBytes = 0;
  /**
   * The latest fragments, joined in JS and written to the buffer a batch at a time: a write per fragment crossed
   * into C++ once per token, which cost a quarter of a short token's time in the bridge.
   */
  private pending = '';
  private pendingCount = 0;
  private pendingBytes = 0;

  constructor(
    private readonly budget: ByteBudget,
    private readonly maxBytes: number,
  ) {}

  /** Keeps a fragment of `size` UTF-8 bytes, or says which bound it would cross (the caller then discards). */
  append(fragment: string, size: number): NotKept | undefined {
    if (fragment === '') return undefined;
    if (this.textBytes + size > this.maxBytes) return 'event_limit';
    this.textBytes += size;
    this.pending += fragment;
    this.pendingCount++;
    this.pendingBytes += size;
    if (this.pendingCount < BATCH_FRAGMENTS && this.pending.length < BATCH_CHARS) return undefined;
    return this.flush();
  }

  /** The fragments joined, as a string (a lone surrogate, which UTF-8 cannot hold, may come back as U+FFFD). */
  text(): string {
    return this.buf.toString('utf8', 0, this.used) + this.pending;
  }

  /** Gives the memory back to the agent's budget; the text is empty from now on. */
  release(): void {
    this.budget.give(this.buf.length);
    this.buf = EMPTY;
    this.used = this.textBytes = this.pendingCount = this.pendingBytes = 0;
    this.pending = '';
  }

  /**
   * Writes the pending fragments to the buffer, all but a trailing high surrogate: a pair split across two
   * fragments must become one character, not two U+FFFD.
   */
  private flush(): NotKept | undefined {
    const refused = this.reserve(this.pendingBytes);
    if (refused) return refused;
    let text = this.pending;
    const held = isHighSurrogate(text.charCodeAt(text.length - 1)) ? text.slice(-1) : '';
    if (held) text = text.slice(0, -1);
    this.used += this.buf.write(text, this.used, 'utf8');
    this.pending = held;
    this.pendingCount = held ? 1 : 0;
    this.pendingBytes = held ? HELD_BYTES : 0;
    return undefined;
  }

  /** Room for `bytes` more, growing by doubling (at most to what `maxBytes` can need) within the budget. */
  private reserve(bytes: number): NotKept | undefined {
    const needed = this.used + bytes;
    if (needed <= this.buf.length) return undefined;
    const capacity = Math.max(
      needed,
      Math.min(Math.max(FIRST_CAPACITY, this.buf.length * 2), this.maxBytes + HELD_BYTES),
    );
    const refused = this.budget.take(capacity - this.buf.length);
    if (refused) return refused;
    // allocUnsafeSlow: a buffer of its own, never a slice of Node's shared pool that would pin the whole pool.
    const next = Buffer.allocUnsafeSlow(capacity);
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
    return undefined;
  }
}
