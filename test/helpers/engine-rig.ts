// The rig of the engine contract (engine-contract.ts): the nodes of one bridge, each an engine with fake
// connections that keep what they were sent and a listener that keeps what it was told, and the ways to wait for
// news between nodes on any bus (real time polled briefly: a Redis bus cannot be stepped by a test clock).
import type {
  AgentEventMessage,
  Connection,
  Engine,
  EngineListener,
  EventToAgent,
  ResumeRequest,
} from '../../src/core/engine.js';
import { eventIdFactory } from '../../src/core/ids.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { eventually } from './eventually.js';

/** The engines of one bridge, one per node, as a setup made them for one test. */
export interface EngineNodes {
  engines: Engine[];
  /** Ends node `i` as a crash would (no goodbye to its agents): the others must find out that it is gone. */
  kill(i: number): Promise<void>;
  close(): Promise<void>;
}

export interface EngineSetup {
  /** How many nodes the engine can have: the cases about other nodes are declared only for 2 or more. */
  nodes: number;
  /** Whether the nodes draw on one rate-limit bucket per app (on one node there is only one). */
  sharedBuckets: boolean;
  start(): Promise<EngineNodes>;
}

export interface FakeConnection extends Connection {
  sent: string[];
}

let nextConnId = 1;
export function fakeConnection(): FakeConnection {
  const sent: string[] = [];
  return { id: nextConnId++, sent, send: (frame) => sent.push(frame), close() {} };
}

type Call<K extends keyof EngineListener> = Parameters<EngineListener[K]>;

/** Keeps every call the engine makes, in order, as the core would receive them. */
export class RecordingListener implements EngineListener {
  readonly heard: [keyof EngineListener, ...unknown[]][] = [];
  /** The arguments of each call of `kind`, in order. */
  calls<K extends keyof EngineListener>(kind: K): Call<K>[] {
    return this.heard.filter(([k]) => k === kind).map(([, ...args]) => args as Call<K>);
  }
  eventDelivered(agentId: string, event: EventToAgent) {
    this.heard.push(['eventDelivered', agentId, event]);
  }
  agentMessage(agentId: string, message: AgentEventMessage) {
    this.heard.push(['agentMessage', agentId, message]);
  }
  agentPresence(agentId: string, online: boolean) {
    this.heard.push(['agentPresence', agentId, online]);
  }
  agentReplaced(agentId: string, conn: Connection) {
    this.heard.push(['agentReplaced', agentId, conn]);
  }
  agentsCutOff(agentIds: string[]) {
    this.heard.push(['agentsCutOff', agentIds]);
  }
  eventUndelivered(agentId: string, eventId: string) {
    this.heard.push(['eventUndelivered', agentId, eventId]);
  }
  resumeRequest(from: string, request: ResumeRequest, connId: number) {
    this.heard.push(['resumeRequest', from, request, connId]);
  }
  framesForApp(from: string, connId: number, eventId: string, frames: string[]) {
    this.heard.push(['framesForApp', from, connId, eventId, frames]);
  }
  resumerGone(from: string, connId: number, eventId: string) {
    this.heard.push(['resumerGone', from, connId, eventId]);
  }
  cancelRequest(from: string, connId: number, eventId: string, appId: string) {
    this.heard.push(['cancelRequest', from, connId, eventId, appId]);
  }
  cancelForAgent(conn: Connection, eventId: string) {
    this.heard.push(['cancelForAgent', conn, eventId]);
  }
  homesGone(node: string | undefined) {
    this.heard.push(['homesGone', node]);
  }
}

export interface Node {
  engine: Engine;
  listener: RecordingListener;
  /** A new id of an event made on this node, as the core makes it. */
  eventId(): string;
}

/** Waits for what other nodes will see once news arrives (at once on one node). */
export const until = (what: string, ok: () => boolean | Promise<boolean>) => eventually(what, ok, (v) => v, 5000);

let nextMark = 1;

export class Rig {
  nodes: Node[] = [];
  /** The bridge's clock: the rate limit's time (its advance shifts the shared buckets' own). */
  clock = new AdjustableClock({ frozen: true, start: 1_000_000 });
  private started: EngineNodes | undefined;

  async start(setup: EngineSetup): Promise<void> {
    this.clock = new AdjustableClock({ frozen: true, start: 1_000_000 });
    this.started = await setup.start();
    this.nodes = this.started.engines.map((engine) => {
      const listener = new RecordingListener();
      engine.listen(listener);
      return { engine, listener, eventId: eventIdFactory(this.clock, engine.eventIdSuffix) };
    });
  }

  async close(): Promise<void> {
    await this.started?.close();
    this.started = undefined;
  }

  kill(i: number): Promise<void> {
    return this.started!.kill(i);
  }

  /** Every node but `node`. */
  others(node: Node): Node[] {
    return this.nodes.filter((n) => n !== node);
  }

  /**
   * Resolves once every node has heard what `from` told them so far: news between two nodes arrives in order, so
   * a mark sent after it arrives after it (a negative, "nothing changed", is only seen after this).
   */
  async allHeard(from: Node): Promise<void> {
    const mark = `~mark${nextMark++}`;
    from.engine.appPresence(mark, true);
    await until(`every node hearing ${mark}`, () => this.nodes.every((n) => n.engine.isAppOnline(mark)));
  }
}
