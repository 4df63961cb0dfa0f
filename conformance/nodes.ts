// Several nodes of one bridge (`--url A --url B,C`): which were given, and on which node each client of a scenario
// connects. A cluster must behave as one bridge, so the suite puts an app and the agent it talks to on different
// nodes, and moves each new connection of the same app or agent to the next node (an agent's second connection
// that replaces its first, a second instance of an app, a reconnection).
import type { ClientKind, ReportConnection } from '../generated/index.js';
import { PreflightError } from './preflight.js';

/** `--url` as commander collects it: repeatable, each value one URL or a comma-separated list. */
export function addUrls(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The nodes, in the order given: the first serves the admin calls and the test clock. */
export function nodeList(url: string | readonly string[]): string[] {
  const nodes = (typeof url === 'string' ? [url] : url)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  if (!nodes.length) throw new PreflightError('--url is empty: give the bridge base URL, e.g. ws://127.0.0.1:8080/v1');
  const twice = nodes.find((n, i) => nodes.indexOf(n) !== i);
  // The same node twice would put "different nodes" on one and prove nothing about the cluster.
  if (twice) throw new PreflightError(`--url ${twice} is given twice: several URLs must be several nodes`);
  return nodes;
}

/** One connection of a scenario and the node it used (the report's record; only kept with several nodes). */
/** A connection a scenario opened and the node it used (spec/conformance.yaml ReportConnection). */
export type PlacedConnection = ReportConnection;

/** Where an app's first connection goes relative to an agent's: one node further, so they never share one. */
const FIRST_NODE: Record<ClientKind, number> = { agent: 0, app: 1 };

/**
 * The placement of one scenario. The k-th connection (from 0) of a client — an app or agent of the fixtures, or a
 * refused handshake's own name — goes to node (offset + first + k) mod N, first being 0 for agents and 1 for apps;
 * the offset is the scenario's number among all scenario files, so that across a run every node serves agents and
 * apps. HTTP calls under the base URL (the directory) go where an app's next connection would, one node per call.
 */
export class Placement {
  readonly connections: PlacedConnection[] = [];
  private readonly opened = new Map<string, number>();
  private httpCalls = 0;

  constructor(
    private readonly nodes: readonly string[],
    private readonly offset: number,
  ) {}

  get several(): boolean {
    return this.nodes.length > 1;
  }

  /** The node for the next connection of `client`, opened under the step's name `actor`. */
  connection(actor: string, client: string, kind: ClientKind): string {
    const k = this.opened.get(client) ?? 0;
    this.opened.set(client, k + 1);
    const node = this.node(FIRST_NODE[kind] + k);
    if (this.several) this.connections.push({ actor, node });
    return node;
  }

  /** The node for the next HTTP call under the base URL. */
  http(): string {
    return this.node(FIRST_NODE.app + this.httpCalls++);
  }

  private node(i: number): string {
    return this.nodes[(this.offset + i) % this.nodes.length]!;
  }
}
