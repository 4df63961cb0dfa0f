// Connections the bridge could not accept (O8).
//
// When the process runs out of file descriptors, libuv does not report it: it closes a reserve descriptor,
// accepts every waiting connection and closes it at once (its "EMFILE trick"), and Node hears nothing. Clients
// see resets and nothing is logged. So the bridge stops below the limit on its own terms: the server's
// `maxConnections` is the open-files limit minus the descriptors open at start and a reserve, and Node then closes
// each extra connection itself with a 'drop' event, which is counted. The accept errors that do reach Node (an
// 'error' with syscall 'accept': EMFILE or ENFILE once libuv's reserve is gone, ENOBUFS, ENOMEM) are counted the
// same way; before, the second one was an unhandled 'error' event that ended the process.
import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:net';
import type { Clock, Timer } from '../core/clock.js';
import type { Logger } from '../core/logger.js';

/** Failures are logged at most once per window, and /readyz answers 503 until a window passes without one. */
export const ACCEPT_FAILURE_WINDOW_MS = 10_000;
/** Descriptors kept beyond those open at start, for SQLite's journals and temporary files and the dashboard's files. */
export const FD_RESERVE = 64;
/** Every `reason` label of bridge_accept_failures_total: a fixed set, whatever errno arrives. */
export const ACCEPT_FAILURE_REASONS = ['MAX_CONNECTIONS', 'EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM', 'OTHER'] as const;
export type AcceptFailureReason = (typeof ACCEPT_FAILURE_REASONS)[number];

export interface ConnectionCap {
  maxConnections: number;
  openFilesLimit: number;
}

/** The cap from the process's open-files limit; Linux only (/proc), elsewhere undefined and Node sets none. */
export function connectionCap(): ConnectionCap | undefined {
  try {
    const soft = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (!soft) return undefined; // unlimited
    const openFilesLimit = Number(soft);
    const open = readdirSync('/proc/self/fd').length;
    return { openFilesLimit, maxConnections: Math.max(1, openFilesLimit - open - FD_RESERVE) };
  } catch {
    return undefined;
  }
}

/** Accept errors with a label of their own; any other errno is OTHER, so the label set stays fixed. */
const ERRNO_REASONS: ReadonlySet<string> = new Set<AcceptFailureReason>(['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM']);

function reasonOf(err: NodeJS.ErrnoException): AcceptFailureReason {
  return ERRNO_REASONS.has(err.code ?? '') ? (err.code as AcceptFailureReason) : 'OTHER';
}

/** What an operator should know about each reason, in one phrase. */
function explain(reason: AcceptFailureReason, cap: ConnectionCap | undefined): string {
  switch (reason) {
    case 'MAX_CONNECTIONS':
      if (!cap) return "over the server's maxConnections";
      return `over the connection cap ${cap.maxConnections} (the open-files limit ${cap.openFilesLimit} minus the files the bridge keeps open); raise the limit (ulimit -n, LimitNOFILE)`;
    case 'EMFILE':
      return "the process's open-files limit is reached; raise it (ulimit -n, LimitNOFILE)";
    case 'ENFILE':
      return "the system's open-files table is full (fs.file-max)";
    case 'ENOBUFS':
    case 'ENOMEM':
      return 'the kernel is out of memory for sockets';
    default:
      return 'an unexpected accept error';
  }
}

type Counts = Map<AcceptFailureReason, number>;

const total = (counts: Counts) => [...counts.values()].reduce((a, b) => a + b, 0);

export interface AcceptFailureDeps {
  clock: Clock;
  log: Logger;
  /** Counts one failure in bridge_accept_failures_total. */
  count(reason: AcceptFailureReason): void;
  cap: ConnectionCap | undefined;
}

/** Counts accept failures, logs them once per window with their count, and tells /readyz about a recent one. */
export class AcceptFailures {
  private unlogged: Counts = new Map();
  private timer: Timer | undefined;
  private burst: { since: number; last: number; counts: Counts } | undefined;

  constructor(private readonly deps: AcceptFailureDeps) {}

  record(reason: AcceptFailureReason): void {
    const now = this.deps.clock.now();
    if (!this.burst || now - this.burst.last >= ACCEPT_FAILURE_WINDOW_MS) this.burst = { since: now, last: now, counts: new Map() };
    this.burst.last = now;
    this.burst.counts.set(reason, (this.burst.counts.get(reason) ?? 0) + 1);
    this.unlogged.set(reason, (this.unlogged.get(reason) ?? 0) + 1);
    this.deps.count(reason);
    if (!this.timer) this.logWindow(); // the first failure of a burst is logged at once
  }

  /** Why new connections fail right now (a failure within the window), or undefined when none did. */
  recent(): string | undefined {
    const { burst } = this;
    if (!burst || this.deps.clock.now() - burst.last >= ACCEPT_FAILURE_WINDOW_MS) return undefined;
    const since = new Date(burst.since).toISOString();
    return `The bridge could not accept ${total(burst.counts)} connection(s) since ${since}: ${this.describe(burst.counts)}. It takes no new clients until ${ACCEPT_FAILURE_WINDOW_MS / 1000} s pass without a failure.`;
  }

  stop(): void {
    this.timer?.cancel();
  }

  private describe(counts: Counts): string {
    return [...counts].map(([reason, n]) => `${reason} x${n} (${explain(reason, this.deps.cap)})`).join(', ');
  }

  /** Logs what failed since the last line, then waits a window; a window with no failure ends the burst. */
  private logWindow(): void {
    const failures = total(this.unlogged);
    if (failures === 0) {
      this.timer = undefined;
      this.deps.log.info({ windowMs: ACCEPT_FAILURE_WINDOW_MS }, 'accept failures stopped: none in the last window');
      return;
    }
    const reasons = Object.fromEntries(this.unlogged);
    this.deps.log.error({ failures, reasons }, `accept failed ${failures} time(s): ${this.describe(this.unlogged)}`);
    this.unlogged = new Map();
    this.timer = this.deps.clock.setTimer(ACCEPT_FAILURE_WINDOW_MS, () => this.logWindow());
  }
}

/**
 * Caps the server's connections below the open-files limit and counts what it cannot accept: the connections
 * Node drops over the cap, and accept errors. Call once the server listens (a listen error is the caller's).
 */
export function watchAccepts(server: Server, deps: Omit<AcceptFailureDeps, 'cap'>): AcceptFailures {
  const cap = connectionCap();
  if (cap) server.maxConnections = cap.maxConnections;
  const failures = new AcceptFailures({ ...deps, cap });
  server.on('drop', () => failures.record('MAX_CONNECTIONS'));
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.syscall === 'accept') failures.record(reasonOf(err));
    else deps.log.error({ err }, 'http server error');
  });
  return failures;
}
