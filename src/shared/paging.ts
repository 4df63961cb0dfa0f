// Keyset paging of an in-memory listing (sessions, organizations, apps, agents): sorted by a string id compared
// by code units, so that the order and the `after` cursor agree whatever the locale.

export interface KeyPage<T> {
  items: T[];
  /** The key of the last item when more follow; null on the last page. */
  next_after: string | null;
}

export const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** At most `limit` of `sorted` (ascending by `key`) after the cursor `after`, and the next page's cursor. */
export function pageAfter<T>(
  sorted: readonly T[],
  key: (item: T) => string,
  after: string | undefined,
  limit: number,
): KeyPage<T> {
  const rest = after === undefined ? sorted : sorted.filter((item) => key(item) > after);
  const items = rest.slice(0, limit);
  return { items, next_after: rest.length > limit ? key(items[items.length - 1]!) : null };
}
