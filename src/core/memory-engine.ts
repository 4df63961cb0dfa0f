// The engine of a bridge of one node: the agents' connections in a map, the apps' in a set, every event at home and
// the rate limit's buckets in this process. Nothing here ever crosses a node: there is no other.
import {
  takeThenLocate,
  type Connection,
  type Engine,
  type EngineListener,
  type EventToAgent,
  type Taken,
} from './engine.js';
import { RateLimiter, type EventRateLimit } from './rate-limit.js';

/** A connection of another node: there is none, so nothing sent to it goes anywhere. */
const NO_OTHER_NODE: Connection = { id: 0, send() {}, close() {} };

export class MemoryEngine implements Engine {
  readonly eventIdSuffix = '';
  private readonly agents = new Map<string, Connection>();
  private readonly apps = new Set<string>();
  /** No other node to hear from: told only of deliveries. */
  private listener: EngineListener | undefined;

  listen(listener: EngineListener): void {
    this.listener = listener;
  }

  attachAgent(agentId: string, conn: Connection): Connection | undefined {
    const previous = this.agents.get(agentId);
    this.agents.set(agentId, conn);
    return previous === conn ? undefined : previous;
  }

  detachAgent(agentId: string, conn: Connection): boolean {
    if (this.agents.get(agentId) !== conn) return false;
    this.agents.delete(agentId);
    return true;
  }

  isAgentOnline(agentId: string): boolean {
    return this.agents.has(agentId);
  }

  locateAgent(agentId: string): boolean {
    return this.agents.has(agentId); // this node's picture is the whole truth
  }

  toAgent(agentId: string, frame: string, event?: EventToAgent): boolean {
    const conn = this.agents.get(agentId);
    if (!conn) return false;
    conn.send(frame);
    if (event) this.listener?.eventDelivered(agentId, event);
    return true;
  }

  toEventHome(): boolean {
    return false; // every event lives here
  }

  cancelToAgent(agentId: string, eventId: string): void {
    const conn = this.agents.get(agentId);
    if (conn) this.listener?.cancelForAgent(conn, eventId);
  }

  appPresence(appId: string, online: boolean): void {
    if (online) this.apps.add(appId);
    else this.apps.delete(appId);
  }

  isAppOnline(appId: string): boolean {
    return this.apps.has(appId);
  }

  toResumeHome(): undefined {
    return undefined; // every event's home is this node
  }

  // No other node can hand this one a resume, so none is ever answered, relayed or given up.
  answerResume(): void {}
  remoteApp(): Connection {
    return NO_OTHER_NODE;
  }
  resumerGone(): void {}
  cancelAtHome(): boolean {
    return false; // no connection here resumed an event held elsewhere
  }

  eventRateLimit(perSecond: number, burst: number): EventRateLimit {
    return new RateLimiter(perSecond, burst);
  }

  takeForEvent(limit: EventRateLimit, appId: string, agentId: string, now: number): Taken | Promise<Taken> {
    return takeThenLocate(limit, appId, now, () => this.agents.has(agentId));
  }
}
