// The fragments kept for a resume (R3, R7): given back exactly as sent, by position, across the batches they are
// written in, and the oldest dropped one at a time.
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { KeptFragments } from '../../src/core/resume-buffer.js';

/** What keeping a fragment counts (R7): its JSON in UTF-8 and its index; the first of a batch, the batch's buffer. */
const bytes = (text: string) => Buffer.byteLength(JSON.stringify(text), 'utf8') + LIMITS.resumeFragmentIndexBytes;

function keep(fragments: string[]): KeptFragments {
  const kept = new KeptFragments();
  fragments.forEach((f) => kept.append(JSON.stringify(f)));
  return kept;
}

const after = (kept: KeptFragments, seq: number) => [...kept.after(seq)].map(([s, json]) => [s, JSON.parse(json)]);

describe('the fragments kept for a resume', function () {
  it('gives back every fragment exactly, lone surrogates and all, from any position, in and across batches', function () {
    const fragments = Array.from({ length: 300 }, (_, i) => [`w${i} `, 'é€', '\ud83d', '\ude00', '"q"\n', ''][i % 6]!);
    const kept = keep(fragments);
    expect(kept.sent).to.equal(300);
    const batches = 300 / 32; // none of them reaches 1024 characters before 32 fragments
    expect(kept.bytes).to.equal(
      fragments.reduce((n, f) => n + bytes(f), 0) + Math.ceil(batches) * LIMITS.resumeBufferOverheadBytes,
    );
    for (const from of [0, 1, 63, 64, 65, 200, 299, 300]) {
      expect(after(kept, from)).to.deep.equal(fragments.slice(from).map((f, i) => [from + i + 1, f]));
    }
    kept.seal();
    expect(after(kept, 10)).to.deep.equal(fragments.slice(10).map((f, i) => [11 + i, f]));
  });

  it('drops the oldest one at a time, giving back its size, and knows the first position it still has', function () {
    const fragments = Array.from({ length: 100 }, (_, i) => `f${i}`);
    const kept = keep(fragments);
    let dropped = 0;
    for (let i = 0; i < 70; i++) dropped += kept.dropOldest();
    const buffers = (count: number) => count * LIMITS.resumeBufferOverheadBytes; // fragments 1, 33, 65, 97 open one
    expect(dropped).to.equal(fragments.slice(0, 70).reduce((n, f) => n + bytes(f), 0) + buffers(3));
    expect(kept.firstKept).to.equal(71);
    expect(after(kept, 0).map(([s]) => s)).to.deep.equal(Array.from({ length: 30 }, (_, i) => 71 + i));
    expect(kept.dropAll()).to.equal(fragments.slice(70).reduce((n, f) => n + bytes(f), 0) + buffers(1));
    expect([kept.firstKept, kept.bytes, after(kept, 0).length]).to.deep.equal([101, 0, 0]);
    expect(kept.dropOldest()).to.equal(0);
    expect(kept.skip()).to.equal(101);
    expect(kept.append('"next"')).to.equal(102);
    expect(after(kept, 101)).to.deep.equal([[102, 'next']]);
  });
});
