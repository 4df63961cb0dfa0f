// The kept streamed text (L14): fragments joined exactly, memory counted against the agent's budget as it grows,
// and every bound refusing before anything of the fragment is kept.
import { expect } from 'chai';
import { ByteBudget, StreamedText } from '../../src/core/streamed-text.js';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

function keep(text: StreamedText, fragments: string[]) {
  return fragments.map((f) => text.append(f, bytes(f)));
}

describe('the kept streamed text', function () {
  it('joins fragments in order, whatever their characters, and pairs a surrogate pair split between two', function () {
    const text = new StreamedText(new ByteBudget(1 << 20, 'agent_limit'), 1000);
    const fragments = ['Hello ', 'wörld ', '€ ', '\ud83d', '\ude00', ' "q"\n', '', 'end'];
    expect(keep(text, fragments)).to.deep.equal(fragments.map(() => undefined));
    expect(text.text()).to.equal(fragments.join(''));
  });

  it('gives a trailing high surrogate back as it came, and turns a lone one written to the buffer into U+FFFD (UTF-8 cannot hold it)', function () {
    const trailing = new StreamedText(new ByteBudget(1 << 20, 'agent_limit'), 10_000);
    keep(trailing, ['a'.repeat(600), 'b\ud83d']);
    expect(trailing.text()).to.equal(`${'a'.repeat(600)}b\ud83d`);
    const lone = new StreamedText(new ByteBudget(1 << 20, 'agent_limit'), 10_000);
    keep(lone, ['a\ude00b', '\ud83dc'.padEnd(600, 'c')]);
    expect(lone.text()).to.equal('a\ufffdb\ufffd'.padEnd(603, 'c'));
  });

  it('refuses a fragment that would cross the per-event bound, counted in UTF-8 bytes; exactly at it is kept', function () {
    const text = new StreamedText(new ByteBudget(1 << 20, 'agent_limit'), 10);
    expect(keep(text, ['12345678', 'é'])).to.deep.equal([undefined, undefined]); // 10 bytes
    expect(keep(text, ['x'])).to.deep.equal(['event_limit']);
    expect(new StreamedText(new ByteBudget(1 << 20, 'agent_limit'), 0).append('x', 1)).to.equal('event_limit');
  });

  it('writes fragments to its buffer in batches, growing by doubling from 4 KiB up to what the bound can need, counted in the shared budget', function () {
    const budget = new ByteBudget(1 << 20, 'agent_limit');
    const text = new StreamedText(budget, 10_000);
    keep(text, Array(31).fill('a'));
    expect(budget.used, 'short fragments wait in a batch').to.equal(0);
    keep(text, ['a']); // the 32nd
    expect(budget.used).to.equal(4096);
    keep(text, ['b'.repeat(4065)]); // one byte more than the first buffer holds
    expect(budget.used).to.equal(8192);
    keep(text, ['c'.repeat(5000)]);
    expect(budget.used).to.equal(10_003); // not 16 KiB: no more than the bound, plus room for a held surrogate
    expect(text.text()).to.have.length(9097);
    text.release();
    expect(budget.used).to.equal(0);
    expect(text.text()).to.equal('');
  });

  it("refuses a fragment whose batch would cross the agent's budget, keeping nothing of it", function () {
    const budget = new ByteBudget(6000, 'agent_limit');
    const first = new StreamedText(budget, 100_000);
    const second = new StreamedText(budget, 100_000);
    const long = 'x'.repeat(600); // over a batch's 512 characters: written at once
    expect(keep(first, [long])).to.deep.equal([undefined]);
    expect(budget.used).to.equal(4096);
    expect(keep(second, [long])).to.deep.equal(['agent_limit']);
    expect(budget.used).to.equal(4096);
    second.release();
    first.release();
    expect(keep(new StreamedText(budget, 100_000), [long])).to.deep.equal([undefined]);
  });

  it('joins a surrogate pair split across a batch boundary', function () {
    const text = new StreamedText(new ByteBudget(1 << 20, 'agent_limit'), 10_000);
    keep(text, ['x'.repeat(511) + '\ud83d', '\ude00 and more']);
    expect(text.text()).to.equal(`${'x'.repeat(511)}😀 and more`);
  });
});
