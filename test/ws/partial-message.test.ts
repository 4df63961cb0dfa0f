// The WebSocket adapter's view of a message received in part (L20): from the frame headers in a client's bytes, how
// much a message begun and not yet whole holds after each chunk, whatever the chunks' boundaries.
import { expect } from 'chai';
import { CHUNK_COST_BYTES, PartialMessage } from '../../src/ws/partial-message.js';

const TEXT = 0x1;
const CONTINUATION = 0x0;
const PING = 0x9;

/** A client's frame (masked, as clients send them) with `length` bytes of payload. */
function frame(opcode: number, length: number, fin = true): Buffer {
  const lengthBytes =
    length < 126
      ? [length]
      : length < 65536
        ? [126, length >> 8, length & 0xff]
        : [127, 0, 0, 0, 0, (length >>> 24) & 0xff, (length >> 16) & 0xff, (length >> 8) & 0xff, length & 0xff];
  const header = Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | lengthBytes[0]!, ...lengthBytes.slice(1), 1, 2, 3, 4]);
  return Buffer.concat([header, Buffer.alloc(length, 0x61)]);
}

/** Reads the chunks in turn; what the last one left. */
function readAll(partial: PartialMessage, ...chunks: Buffer[]) {
  return chunks.map((c) => partial.read(c)).at(-1)!;
}

describe('a message received in part, from the frame headers (L20)', function () {
  it('holds nothing after a chunk of whole messages, control frames included', function () {
    const partial = new PartialMessage();
    expect(
      partial.read(Buffer.concat([frame(TEXT, 10), frame(PING, 0), frame(TEXT, 300), frame(TEXT, 70_000)])),
    ).to.deep.equal({ held: 0, restarted: false });
  });

  it('holds the bytes of a frame read in part, and a chunk for each read, until its last byte', function () {
    const partial = new PartialMessage();
    const whole = frame(TEXT, 200_000);
    const [a, b, c] = [whole.subarray(0, 1000), whole.subarray(1000, 150_000), whole.subarray(150_000)];
    expect(partial.read(a)).to.deep.equal({ held: 1000 + CHUNK_COST_BYTES, restarted: true });
    expect(partial.read(b)).to.deep.equal({ held: 150_000 + 2 * CHUNK_COST_BYTES, restarted: false });
    expect(partial.read(c)).to.deep.equal({ held: 0, restarted: false });
  });

  it('starts again when a chunk ends one message and begins the next', function () {
    const partial = new PartialMessage();
    const first = frame(TEXT, 500);
    const second = frame(TEXT, 500);
    partial.read(first.subarray(0, 100));
    expect(partial.read(Buffer.concat([first.subarray(100), second.subarray(0, 50)]))).to.deep.equal({
      held: 50 + CHUNK_COST_BYTES,
      restarted: true,
    });
    expect(partial.read(second.subarray(50))).to.deep.equal({ held: 0, restarted: false });
  });

  it('holds the frames of a fragmented message until its last, a ping between them included', function () {
    const partial = new PartialMessage();
    const start = frame(TEXT, 1000, false);
    const ping = frame(PING, 4);
    const middle = frame(CONTINUATION, 2000, false);
    expect(readAll(partial, start, ping, middle)).to.deep.equal({
      held: start.length + ping.length + middle.length + 3 * CHUNK_COST_BYTES,
      restarted: false,
    });
    expect(partial.read(frame(CONTINUATION, 3))).to.deep.equal({ held: 0, restarted: false });
  });

  it('follows headers split across chunks, with 16- and 64-bit lengths, and counts a client trickling a byte at a time as what it costs', function () {
    for (const length of [125, 126, 65_535, 65_536, 1_048_576]) {
      const partial = new PartialMessage();
      const whole = frame(TEXT, length);
      const bytes = [...whole.subarray(0, 20)].map((b) => Buffer.from([b]));
      expect(readAll(partial, ...bytes), `${length}`).to.deep.equal({
        held: 20 + 20 * CHUNK_COST_BYTES,
        restarted: false,
      });
      expect(partial.read(whole.subarray(20)), `${length}`).to.deep.equal({ held: 0, restarted: false });
    }
  });
});
