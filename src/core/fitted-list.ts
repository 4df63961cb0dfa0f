// Lists whose answer must fit one frame (frameMaxBytes, W2): the `agents` answer to `discover` (W13) and a page of
// the HTTP directory (H2). However large the organization, they hold as many entries as fit, in order, and say that
// some were left out; the entries are serialised only until the frame is full.

const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8');

export interface FittedList {
  /** The JSON text of each entry that fits, in order. */
  items: string[];
  /** Whether every entry fit (then the answer is the whole list). */
  complete: boolean;
}

/**
 * The first of `entries` whose JSON array (`[a,b,…]`) is at most `budget` UTF-8 bytes, and at most `maxCount`
 * entries. When not all fit, the array is at most `budget - cutCost` bytes, so that what says so fits too.
 */
export function fitList(entries: Iterable<unknown>, budget: number, cutCost: number, maxCount = Infinity): FittedList {
  const items: string[] = [];
  const sizes: number[] = [];
  let used = '[]'.length;
  let complete = true;
  for (const entry of entries) {
    if (items.length === maxCount) {
      complete = false;
      break;
    }
    const json = JSON.stringify(entry);
    const size = utf8Length(json) + (items.length ? ','.length : 0);
    if (used + size > budget) {
      complete = false;
      break;
    }
    items.push(json);
    sizes.push(size);
    used += size;
  }
  if (!complete) {
    while (items.length && used + cutCost > budget) {
      used -= sizes.pop()!;
      items.pop();
    }
  }
  return { items, complete };
}
