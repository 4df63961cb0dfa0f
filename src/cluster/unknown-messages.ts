// What a node does with a bus message it cannot read (O16): during a rolling upgrade two releases share the bus, and
// a message of another version or a kind only the newer one knows must be neither a crash nor a silent loss. It is
// counted (bridge_cluster_messages_unknown_total), logged a burst at a time (a node of another release can send
// thousands a second) and dropped. Control ops are the exception the caller handles: answered, then counted here.
import {
  BUS_KINDS,
  BUS_VERSION,
  BUS_VERSION_WHEN_ABSENT,
  type BusMessage,
  type BusMessageHead,
} from '../../generated/index.js';
import { BurstLog, LOG_WINDOW_MS } from '../core/burst-log.js';
import { systemClock, type Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';

export type UnknownReason = 'version' | 'kind' | 'op';

export type UnknownCounts = Record<UnknownReason, number>;

const KNOWN_KINDS: ReadonlySet<unknown> = new Set(BUS_KINDS);

/** A value as the log shows it: short, whatever a stranger sent. */
const shown = (value: unknown) => String(value).slice(0, 40);

export class UnknownMessages {
  readonly counts: UnknownCounts = { version: 0, kind: 0, op: 0 };
  private readonly burst: BurstLog<string>;

  constructor(log: Logger, clock: Clock = systemClock) {
    this.burst = new BurstLog({
      clock,
      windowMs: LOG_WINDOW_MS,
      report: (counts, total) =>
        log.warn(
          { unknown: Object.fromEntries(counts), total },
          'bus messages this node does not know were dropped (a ctl op answered as unknown): a node of another release? (O16)',
        ),
    });
  }

  /**
   * Whether this node can read `message`: one comparison and one set lookup, no validation (an agent's fragments
   * cross the bus one message each, and the nodes build what they send from the same spec). Counts what it cannot.
   * A message without `v` comes from a release before the bus was versioned, whose messages were version 1's.
   */
  readable(from: string, message: Partial<BusMessageHead> | undefined): message is BusMessage {
    const version = message?.v ?? BUS_VERSION_WHEN_ABSENT;
    if (version !== BUS_VERSION) return this.record('version', from, version);
    if (!KNOWN_KINDS.has(message?.k)) return this.record('kind', from, message?.k);
    return true;
  }

  /** Counts and logs one message of another version, kind or control op `what`, from node `from`. */
  record(reason: UnknownReason, from: string, what: unknown): false {
    this.counts[reason]++;
    this.burst.record(`${reason} ${shown(what)} from ${shown(from)}`);
    return false;
  }

  /** Writes what is not logged yet (the node stops). */
  flush(): void {
    this.burst.flush();
  }
}
