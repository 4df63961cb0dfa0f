// Log lines about one app's or agent's own doings (a connection opened or closed, an event ended in error), one per
// occurrence so that an operator can follow a client, within a budget per client and window: past it the client's
// occurrences are counted and told in one line when the window ends. One client that opens connections in a loop
// fills neither the disk nor the others' share of the log; nothing goes untold.
import type { Clock, Timer } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { LOG_WINDOW_MS } from './burst-log.js';
import type { Owner } from './held-bytes.js';

/** Lines about one client per window, one by one; the rest of its window is one line. */
export const LINES_PER_CLIENT_PER_WINDOW = 20;

interface Window {
  client: Owner;
  lines: number;
  /** What was not written one by one, by kind of occurrence. */
  untold: Map<string, number>;
}

export class OwnerLog {
  private windows = new Map<string, Window>();
  private timer: Timer | undefined;

  constructor(
    private readonly log: Logger,
    private readonly clock: Clock,
    /** What the summary line calls the occurrences (`connections`, `events ended in error`). */
    private readonly what: string,
  ) {}

  /** Writes `fields` and `message` at info, or counts the occurrence as `kind` when the client's budget is spent. */
  info(client: Owner, kind: string, fields: object, message: string): void {
    const key = `${client.kind}:${client.id}`;
    let window = this.windows.get(key);
    if (!window) this.windows.set(key, (window = { client, lines: 0, untold: new Map() }));
    this.timer ??= this.clock.setTimer(LOG_WINDOW_MS, () => this.endWindow());
    if (window.lines < LINES_PER_CLIENT_PER_WINDOW) {
      window.lines++;
      return this.log.info(fields, message);
    }
    window.untold.set(kind, (window.untold.get(kind) ?? 0) + 1);
  }

  /** Tells what the window left untold now (a shutdown), and stops. */
  stop(): void {
    this.timer?.cancel();
    this.endWindow();
  }

  private endWindow(): void {
    this.timer = undefined;
    for (const { client, untold } of this.windows.values()) {
      if (!untold.size) continue;
      const total = [...untold.values()].reduce((a, b) => a + b, 0);
      this.log.info(
        { kind: client.kind, [`${client.kind}_id`]: client.id, untold: Object.fromEntries(untold) },
        `${this.what} of ${client.kind} ${client.id} not logged one by one in the last ${LOG_WINDOW_MS / 1000} s: ${total}`,
      );
    }
    this.windows = new Map();
  }
}
