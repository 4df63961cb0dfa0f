// Token fragments (§2.3, §8, W11): each `token` message carries at most LIMITS.tokenFragmentMaxBytes UTF-8 bytes,
// and the connector guide recommends 1 to 5 words. Splitting never cuts a character: the pieces always join back
// to the original string, code point by code point (a surrogate pair is never separated).
import { LIMITS } from '../../../generated/index.js';

/** UTF-8 bytes of one code point (a lone surrogate is sent as U+FFFD: 3 bytes, as Buffer.byteLength counts it). */
function utf8Width(codePoint: number): number {
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

const isSpace = (codePoint: number) =>
  codePoint < 0x80
    ? codePoint === 0x20 || (codePoint >= 0x09 && codePoint <= 0x0d)
    : /\s/u.test(String.fromCodePoint(codePoint));

/**
 * Cuts `text` into pieces of at most `maxBytes` UTF-8 bytes each, never inside a code point. A piece ends after
 * the last whitespace that fits when there is one, so words stay whole where they can. `''` gives `[]`.
 */
export function splitByBytes(text: string, maxBytes: number = LIMITS.tokenFragmentMaxBytes): string[] {
  if (!Number.isInteger(maxBytes) || maxBytes < 4)
    throw new RangeError(`maxBytes must be an integer of at least 4 (one code point), got ${maxBytes}`);
  const pieces: string[] = [];
  let start = 0; // index where the current piece starts
  let bytes = 0; // its UTF-8 length so far
  let afterSpace = -1; // index just after the last whitespace in the current piece
  let bytesAtSpace = 0; // the piece's length up to afterSpace
  for (let i = 0; i < text.length;) {
    const codePoint = text.codePointAt(i)!;
    const width = utf8Width(codePoint);
    if (bytes + width > maxBytes) {
      const cut = afterSpace > start ? afterSpace : i;
      pieces.push(text.slice(start, cut));
      bytes = cut === i ? 0 : bytes - bytesAtSpace;
      start = cut;
      afterSpace = -1;
      if (bytes + width > maxBytes) {
        // The word after that whitespace does not leave room for this character either: cut it here.
        pieces.push(text.slice(start, i));
        start = i;
        bytes = 0;
      }
    }
    bytes += width;
    i += codePoint > 0xffff ? 2 : 1;
    if (isSpace(codePoint)) {
      afterSpace = i;
      bytesAtSpace = bytes;
    }
  }
  if (start < text.length) pieces.push(text.slice(start));
  return pieces;
}

/**
 * Groups `text` into fragments of `wordsPerFragment` words each, whitespace kept with the word before it (leading
 * whitespace with the first), so the fragments join back to `text` exactly. `''` gives `[]`.
 */
export function splitWords(text: string, wordsPerFragment = 1): string[] {
  if (!Number.isInteger(wordsPerFragment) || wordsPerFragment < 1)
    throw new RangeError(`wordsPerFragment must be a positive integer, got ${wordsPerFragment}`);
  if (!text) return [];
  const lead = /^\s*/u.exec(text)![0];
  const words = text.slice(lead.length).match(/\S+\s*/gu);
  if (!words) return [text];
  words[0] = lead + words[0];
  const fragments: string[] = [];
  for (let i = 0; i < words.length; i += wordsPerFragment)
    fragments.push(words.slice(i, i + wordsPerFragment).join(''));
  return fragments;
}

/** A text cut to at most one token fragment's size, so that a huge message (an exception's) cannot make a huge frame. */
export const capped = (text: string): string => splitByBytes(text, LIMITS.tokenFragmentMaxBytes)[0] ?? '';
