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
import { BurstLog, LOG_WINDOW_MS, countTotal, type Counts } from '../core/burst-log.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';

/** Failures are logged at most once per window, and /readyz answers 503 until a window passes without one. */
export const ACCEPT_FAILURE_WINDOW_MS = LOG_WINDOW_MS;
/** Descriptors kept beyond those open at start, for SQLite's journals and temporary files and the dashboard's files. */
export const FD_RESERVE = 64;
/** TCP connections kept for HTTP (probes, scrapes, the admin API) and handshakes under way beyond the WebSocket cap. */
export const HTTP_RESERVE = 100;
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

export interface AcceptFailureDeps {
  clock: Clock;
  log: Logger;
  /** Counts one failure in bridge_accept_failures_total. */
  count(reason: AcceptFailureReason): void;
  cap: ConnectionCap | undefined;
}

/** Counts accept failures, logs them once per window with their count, and tells /readyz about a recent one. */
export class AcceptFailures {
  private readonly burst: BurstLog<AcceptFailureReason>;

  constructor(private readonly deps: AcceptFailureDeps) {
    this.burst = new BurstLog({
      clock: deps.clock,
      windowMs: ACCEPT_FAILURE_WINDOW_MS,
      report: (counts, failures) =>
        deps.log.error(
          { failures, reasons: Object.fromEntries(counts) },
          `accept failed ${failures} time(s): ${this.describe(counts)}`,
        ),
      quiet: () =>
        deps.log.info({ windowMs: ACCEPT_FAILURE_WINDOW_MS }, 'accept failures stopped: none in the last window'),
    });
  }

  record(reason: AcceptFailureReason): void {
    this.deps.count(reason);
    this.burst.record(reason);
  }

  /** Why new connections fail right now (a failure within the window), or undefined when none did. */
  recent(): string | undefined {
    const burst = this.burst.recent();
    if (!burst) return undefined;
    const since = new Date(burst.since).toISOString();
    return `The bridge could not accept ${countTotal(burst.counts)} connection(s) since ${since}: ${this.describe(burst.counts)}. It takes no new clients until ${ACCEPT_FAILURE_WINDOW_MS / 1000} s pass without a failure.`;
  }

  stop(): void {
    this.burst.stop();
  }

  private describe(counts: Counts<AcceptFailureReason>): string {
    return [...counts].map(([reason, n]) => `${reason} x${n} (${explain(reason, this.deps.cap)})`).join(', ');
  }
}

/**
 * WebSocket connections the bridge takes (L18): MAX_CONNECTIONS, and below the TCP cap by HTTP_RESERVE so that a
 * client over it gets TOO_MANY_CONNECTIONS in its handshake, and /metrics, /readyz and the admin API still answer.
 */
export function webSocketCap(configured: number, cap: ConnectionCap | undefined): number {
  return cap ? Math.max(1, Math.min(configured, cap.maxConnections - HTTP_RESERVE)) : configured;
}

/**
 * Caps the server's connections below the open-files limit and counts what it cannot accept: the connections
 * Node drops over the cap, and accept errors. Call once the server listens (a listen error is the caller's).
 */
export function watchAccepts(server: Server, deps: AcceptFailureDeps): AcceptFailures {
  const { cap } = deps;
  if (cap) server.maxConnections = cap.maxConnections;
  const failures = new AcceptFailures(deps);
  server.on('drop', () => failures.record('MAX_CONNECTIONS'));
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.syscall === 'accept') failures.record(reasonOf(err));
    else deps.log.error({ err }, 'http server error');
  });
  return failures;
}
