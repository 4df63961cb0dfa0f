// Several nodes in one process, for tests: a hub passes messages between them asynchronously (as a network
// would: in order, never within the sender's call) and can kill a node or cut its link.
import type { BusMessageHead } from '../../generated/index.js';
import { silentLogger, type Logger } from '../shared/logger.js';
import type { Bus, BusMessage } from './bus.js';
import { BusListeners } from './bus-listeners.js';

class MemoryBus extends BusListeners implements Bus {
  linked = true;

  constructor(
    readonly nodeId: string,
    private readonly hub: MemoryHub,
    log: Logger,
  ) {
    super(log);
  }

  /** What the hub does to this node: a message, a node gone, the link cut or back. */
  readonly hears = {
    message: (from: string, message: BusMessageHead) => this.hear(from, message),
    down: (node: string) => this.downHandlers.forEach((h) => h(node)),
    lost: () => this.lostHandlers.forEach((h) => h()),
    restored: () => this.restoredHandlers.forEach((h) => h()),
  };

  send(node: string, message: BusMessage): void {
    this.hub.deliver(this.nodeId, node, message);
  }

  broadcast(message: BusMessage): void {
    for (const node of this.hub.nodeIds()) if (node !== this.nodeId) this.hub.deliver(this.nodeId, node, message);
  }

  isNodeUp(node: string): boolean {
    return this.hub.has(node);
  }

  peers(): string[] {
    return this.hub.nodeIds().filter((n) => n !== this.nodeId);
  }

  isLinked(): boolean {
    return this.linked;
  }

  async claimAgent(agentId: string, holder: string): Promise<void> {
    if (!this.linked) throw new Error('the link is cut');
    await this.hub.claimWrite();
    this.hub.claims.set(agentId, holder);
  }

  releaseAgent(agentId: string, holder: string): void {
    if (this.linked && this.hub.claims.get(agentId) === holder) this.hub.claims.delete(agentId);
  }

  async lookupAgent(agentId: string): Promise<string | undefined> {
    if (!this.linked) throw new Error('the link is cut');
    return this.hub.claims.get(agentId);
  }
}

export class MemoryHub {
  private readonly buses = new Map<string, MemoryBus>();
  private inFlight = 0;
  /** Messages each node has sent, by kind (what a test of the traffic between nodes counts). */
  readonly sent = new Map<string, number>();
  /** Which node holds each agent, as Redis keeps it (`node:stamp`). */
  readonly claims = new Map<string, string>();
  /** Delays the gossip between nodes, not the claims: the picture of a node lags, the record does not. */
  delayGossip = false;
  /** How a claim's write reaches the record: at once by default; a test holds it to open the window before it lands. */
  claimWrite: () => Promise<void> = () => Promise.resolve();

  join(nodeId: string, log: Logger = silentLogger): Bus {
    const bus = new MemoryBus(nodeId, this, log);
    this.buses.set(nodeId, bus);
    return bus;
  }

  nodeIds(): string[] {
    return [...this.buses.keys()];
  }

  has(node: string): boolean {
    return this.buses.has(node);
  }

  deliver(from: string, to: string, message: BusMessage): void {
    const sender = this.buses.get(from);
    if (!sender?.linked) return;
    this.sent.set(message.k, (this.sent.get(message.k) ?? 0) + 1);
    // Serialised as on a wire: nothing of the sender's objects reaches the receiver.
    const wire = JSON.stringify(message);
    this.inFlight++;
    const later = this.delayGossip ? (fn: () => void) => setTimeout(fn, 20) : setImmediate;
    later(() => {
      this.inFlight--;
      const receiver = this.buses.get(to);
      if (!receiver?.linked || !this.buses.get(from)?.linked) return;
      receiver.hears.message(from, JSON.parse(wire) as BusMessageHead);
    });
  }

  /** The node stops at once (SIGKILL): the others hear that its heartbeat expired. */
  kill(nodeId: string): void {
    this.buses.delete(nodeId);
    for (const [agentId, holder] of this.claims) if (holder.startsWith(`${nodeId}:`)) this.claims.delete(agentId);
    for (const bus of this.buses.values()) bus.hears.down(nodeId);
  }

  /** The node's link is cut: nothing it sends or is sent arrives until `restore`. */
  cut(nodeId: string): void {
    const bus = this.buses.get(nodeId)!;
    bus.linked = false;
    bus.hears.lost();
  }

  restore(nodeId: string): void {
    const bus = this.buses.get(nodeId)!;
    bus.linked = true;
    bus.hears.restored();
  }

  /**
   * Resolves once every message sent so far, and every message those caused, has been delivered, and the
   * lookups of the record they started have been answered (a turn of the event loop at least).
   */
  async settle(): Promise<void> {
    do await new Promise((resolve) => setTimeout(resolve, this.delayGossip ? 25 : 0));
    while (this.inFlight > 0);
  }
}
