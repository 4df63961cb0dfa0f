// Bytes the bridge holds for its connections, summed per app, per agent and for the whole node, each sum with a
// bound (L19, L20). A connection's entry lives from its handshake until its socket is gone, a close handshake
// included: a connection being closed still holds what it held. Sums are kept by addition, a few per change.
import type { ClientKind } from '../../generated/index.js';

/** A bound on the bytes of all the connections of one app, of one agent, and of the node (`total`). */
export type SharedBounds = Record<ClientKind | 'total', number>;

/** Which sum went over its bound: the `bound` label of the metrics. */
export type SharedBound = keyof SharedBounds;

/** Whose connection it is; none for a handshake that was refused (it counts in the node's sum only). */
export interface Owner {
  kind: ClientKind;
  id: string;
}

interface Group {
  bytes: number;
  readonly holdings: Set<Holding<unknown>>;
}

/** One connection's entry. */
export class Holding<T> {
  bytes = 0;
  constructor(
    readonly of: T,
    readonly owner: Owner | undefined,
    /** @internal */ readonly group: Group | undefined,
  ) {}
}

/** Over a bound: the sum, its bound, and the connection that holds the most of it. */
export interface Overrun<T> {
  bound: SharedBound;
  /** The sum's bytes when it was found over. */
  bytes: number;
  limit: number;
  holder: Holding<T>;
}

export class HeldBytes<T> {
  private sum = 0;
  private readonly groups = new Map<string, Group>();
  private readonly holdings = new Set<Holding<T>>();

  constructor(readonly bounds: SharedBounds) {}

  /** Bytes held by every connection together. */
  get total(): number {
    return this.sum;
  }

  open(of: T, owner?: Owner): Holding<T> {
    let group: Group | undefined;
    if (owner) {
      const key = `${owner.kind}:${owner.id}`;
      group = this.groups.get(key);
      if (!group) this.groups.set(key, (group = { bytes: 0, holdings: new Set() }));
    }
    const holding = new Holding(of, owner, group);
    group?.holdings.add(holding);
    this.holdings.add(holding);
    return holding;
  }

  set(holding: Holding<T>, bytes: number): void {
    const change = bytes - holding.bytes;
    if (change === 0) return;
    holding.bytes = bytes;
    this.sum += change;
    if (holding.group) holding.group.bytes += change;
  }

  /** The connection is gone: what it held is no longer held. */
  close(holding: Holding<T>): void {
    if (!this.holdings.delete(holding)) return;
    this.set(holding, 0);
    const { group, owner } = holding;
    if (!group || !owner) return;
    group.holdings.delete(holding);
    if (group.holdings.size === 0) this.groups.delete(`${owner.kind}:${owner.id}`);
  }

  /** The first sum of `holding` over its bound, its owner's before the node's. */
  over(holding: Holding<T>): SharedBound | undefined {
    const { owner, group } = holding;
    if (owner && group && group.bytes > this.bounds[owner.kind]) return owner.kind;
    return this.sum > this.bounds.total ? 'total' : undefined;
  }

  /** Every connection counted in the sum `bound` of `holding`. */
  within(holding: Holding<T>, bound: SharedBound): Iterable<Holding<T>> {
    return bound === 'total' ? this.holdings : ((holding.group?.holdings ?? []) as Iterable<Holding<T>>);
  }

  /** Bytes of the sum `bound` of `holding`. */
  sumOf(holding: Holding<T>, bound: SharedBound): number {
    return bound === 'total' ? this.sum : (holding.group?.bytes ?? 0);
  }

  /**
   * The sum of `holding` that is over its bound, with the connection to let go: the one holding the most among
   * those `first` picks (connections closing already) if any holds something, else among all; undefined when no
   * sum is over. `refresh`, when given, is called first on each connection of a sum that looks over (to replace an
   * estimate by what it really holds) and returns its bytes.
   */
  overrun(
    holding: Holding<T>,
    options: { refresh?: (h: Holding<T>) => number; first?: (h: Holding<T>) => boolean } = {},
  ): Overrun<T> | undefined {
    let bound = this.over(holding);
    if (!bound) return undefined; // the path of every frame: two comparisons
    const { refresh, first } = options;
    const refreshed = new Set<SharedBound>();
    for (; bound; bound = this.over(holding)) {
      if (refresh && !refreshed.has(bound)) {
        refreshed.add(bound);
        for (const h of this.within(holding, bound)) if (h !== holding) this.set(h, refresh(h));
        continue;
      }
      let most: Holding<T> = holding;
      let firstMost: Holding<T> | undefined;
      for (const h of this.within(holding, bound)) {
        if (h.bytes > most.bytes) most = h;
        if (first?.(h) && h.bytes > (firstMost?.bytes ?? 0)) firstMost = h;
      }
      return { bound, bytes: this.sumOf(holding, bound), limit: this.bounds[bound], holder: firstMost ?? most };
    }
    return undefined;
  }

  /** Reads every connection again (for a gauge scraped now and then) and returns the node's sum. */
  refreshAll(refresh: (h: Holding<T>) => number): number {
    for (const h of this.holdings) this.set(h, refresh(h));
    return this.sum;
  }
}
