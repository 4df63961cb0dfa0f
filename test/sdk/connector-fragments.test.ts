// §8, W11: token fragments stay within LIMITS.tokenFragmentMaxBytes UTF-8 bytes, never cut a character, and join
// back to the original text.
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import { splitByBytes, splitWords } from '../../src/sdk/connector/fragments.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
/** True when the string has no unpaired surrogate, i.e. UTF-8 round-trips it. */
const whole = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;

function check(text: string, max: number = LIMITS.tokenFragmentMaxBytes): string[] {
  const pieces = splitByBytes(text, max);
  expect(pieces.join('')).to.equal(text);
  for (const piece of pieces) {
    expect(bytes(piece)).to.be.at.most(max);
    expect(piece.length).to.be.greaterThan(0);
    if (whole(text)) expect(whole(piece), `piece ${JSON.stringify(piece)} cuts a character`).to.equal(true);
  }
  return pieces;
}

describe('connector token fragments', function () {
  it('keeps a fragment of exactly the limit whole and cuts one byte more', function () {
    expect(check('a'.repeat(LIMITS.tokenFragmentMaxBytes))).to.have.length(1);
    const pieces = check('a'.repeat(LIMITS.tokenFragmentMaxBytes + 1));
    expect(pieces.map(bytes)).to.deep.equal([LIMITS.tokenFragmentMaxBytes, 1]);
    expect(splitByBytes('')).to.deep.equal([]);
  });

  it('never cuts a multi-byte character: 2-, 3- and 4-byte (surrogate pair) text at every alignment', function () {
    for (const char of ['é', '€', '😀', '𝄞']) {
      for (const prefix of ['', 'a', 'ab', 'abc']) {
        const text = prefix + char.repeat(3000);
        const pieces = check(text);
        expect(pieces.length).to.be.greaterThan(1);
        // Each piece is as full as a whole character allows.
        for (const piece of pieces.slice(0, -1))
          expect(bytes(piece)).to.be.greaterThan(LIMITS.tokenFragmentMaxBytes - bytes(char));
      }
    }
  });

  it('holds for random mixed text at small limits', function () {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const alphabet = ['a', ' ', 'ß', '€', '😀', '\n', '字', '𝄞', 'z'];
    for (let round = 0; round < 300; round++) {
      let text = '';
      const length = Math.floor(random() * 60);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      check(text, 4 + Math.floor(random() * 12));
    }
  });

  it('ends a piece after whitespace when a word would be cut, and counts a lone surrogate as 3 bytes', function () {
    expect(splitByBytes('hello world again', 12)).to.deep.equal(['hello world ', 'again']);
    expect(splitByBytes('abcdefghij', 4)).to.deep.equal(['abcd', 'efgh', 'ij']);
    const lone = '\ud800'.repeat(5);
    expect(splitByBytes(lone, 6).map((p) => p.length)).to.deep.equal([2, 2, 1]);
    expect(() => splitByBytes('x', 3)).to.throw(RangeError);
  });

  it('groups words for streaming, whitespace kept, so the fragments join back exactly', function () {
    expect(splitWords('You said: hello  brave world', 1)).to.deep.equal([
      'You ',
      'said: ',
      'hello  ',
      'brave ',
      'world',
    ]);
    expect(splitWords('  one two three four five ', 2)).to.deep.equal(['  one two ', 'three four ', 'five ']);
    expect(splitWords('   ', 3)).to.deep.equal(['   ']);
    expect(splitWords('', 3)).to.deep.equal([]);
    expect(() => splitWords('x', 0)).to.throw(RangeError);
  });
});
