// A resource case: one thing a client can make a bridge hold, held within a count and a time, with the canary served
// during it and the target checked after it (ROB-002). What the bridge did about it is observed, not judged: the
// protocol states no bound for any of it.
import { LIMITS, type FixtureSet, type ProvisionCreated } from '../../../generated/index.js';
import type { Fixture } from '../connections.js';
import type { Budget } from '../safety.js';

/** How much the resource cases hold: `quick` for CI (seconds each), `full` for a benchmark-style run. */
export type Scale = 'quick' | 'full';

export interface Amounts {
  /** WebSocket connections one app token opens at once. */
  connections: number;
  /** Sockets whose upgrade request never ends. */
  upgrades: number;
  /** Connections that leave a message unfinished, and the bytes each sends of it. */
  unfinishedFrames: number;
  unfinishedBytes: number;
  /** How long the held resources are held. */
  holdMs: number;
  /** What an agent streams to an app that stopped reading. */
  streamBytes: number;
  /** Events one app sends as fast as it can; resumes of one ended stream. */
  events: number;
  resumes: number;
  /** Agents in one organization's directory. */
  directoryAgents: number;
}

export const SCALES: Record<Scale, Amounts> = {
  quick: {
    connections: 150,
    upgrades: 120,
    unfinishedFrames: 40,
    unfinishedBytes: 256 * 1024,
    holdMs: 2_000,
    streamBytes: 8 * LIMITS.frameMaxBytes,
    events: 1_500,
    resumes: 1_000,
    directoryAgents: 100,
  },
  full: {
    connections: 1_200,
    upgrades: 1_200,
    unfinishedFrames: 400,
    unfinishedBytes: 512 * 1024,
    holdMs: 15_000,
    streamBytes: 64 * LIMITS.frameMaxBytes,
    events: 20_000,
    resumes: 10_000,
    directoryAgents: 2_000,
  },
};

/** What a resource case is given. */
export interface ResourceContext {
  url: string;
  timeoutMs: number;
  amounts: Amounts;
  budget: Budget;
  /** The target pair (org1): the app and agent whose clients hold the resources. */
  target: Fixture;
  /** Registers more (the run removes what it registered at its end). */
  provision(fixtures: FixtureSet): Promise<ProvisionCreated>;
  /** A transcript line. */
  note(text: string): void;
  /** What the bridge did: an informational figure of the report. */
  observe(what: string, value: string | number): void;
  /**
   * The canary, during the load: a new app connection of another organization, its event answered within
   * --canary-ms. Its latency is observed; a canary not served fails ROB-002.
   */
  probe(): Promise<void>;
  /** Something to let go of when the case ends, whatever happens (sockets, timers). */
  hold(release: () => void): void;
}

export interface ResourceCase {
  /** 'resource.connections' */
  id: string;
  /** What it holds, in one line. */
  title: string;
  run(ctx: ResourceContext): Promise<void>;
}

/** A case that cannot be tried against this target (an extension it does not offer): reported skipped, never passed. */
export class NotApplicable extends Error {}

/** Counts of strings, as one line: 'close 4503 ×20, HTTP 503 ×3'. */
export function tally(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v} ×${n}`).join(', ') || 'none';
}

/** What the suite lets one of its own sockets queue before it waits: one largest frame. */
export const SUITE_QUEUE_MAX = LIMITS.frameMaxBytes;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
