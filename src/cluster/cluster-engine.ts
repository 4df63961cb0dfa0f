// The engine of a node among several (see core/engine.ts for who holds what). Presence is gossiped: each node
// tells the others when an agent or app connects to it or leaves it, answers a new node's hello with what it
// holds, and a node whose heartbeat expires takes its agents and apps with it. "Newer" between two connections
// of one agent on two nodes is decided by a hybrid logical stamp (stamp, node): a connection opened after its
// node heard of another is newer than it whatever the clocks say, and of two whose nodes had not heard of each
// other yet, the later by the machines' clocks (microseconds; NTP keeps them within milliseconds) is newer.
// What the nodes say to each other is the spec's (the internal `bus` channel of asyncapi.yaml, O16); each message
// carries its kind `k` and the bus version `v`.
import { BUS_VERSION as v, type BusMessage, type BusSnapshot, type BusToAgent } from '../../generated/index.js';
import {
  takeThenLocate,
  type AgentEventMessage,
  type Connection,
  type Engine,
  type EngineListener,
  type EventToAgent,
  type ResumeRequest,
  type Taken,
} from '../core/engine.js';
import { RateLimiter, type EventRateLimit } from '../core/rate-limit.js';
import { systemClock, type Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { silentLogger } from '../shared/logger.js';
import type { Bus } from './bus.js';
import type { UnknownCounts } from './unknown-messages.js';

interface Holder {
  node: string;
  stamp: number;
}

/** What crossing nodes has lost, for metrics: each also logged. */
export interface ClusterCounters {
  /** Frames for an agent that had left this node by the time they arrived (an event among them ends at once, O21). */
  framesForGoneAgent: number;
  /** Agent messages for an event whose home node is gone (the event ended with its node). */
  messagesForGoneNode: number;
  /** Agents whose events here were ended because the link between nodes was cut while they depended on it. */
  agentsCutOff: number;
  /** Bus messages this node could not read (another version or kind) or whose control op it did not know (O16). */
  unknownMessages: UnknownCounts;
}

/** Whether (a) is newer than (b): stamps first, the node id breaks a tie the same way on every node. */
const newer = (a: Holder, b: Holder) => a.stamp > b.stamp || (a.stamp === b.stamp && a.node > b.node);

/** A token and an agent's claim, read together; `read` false when the record did not answer (the claim is unknown). */
export interface TakenWithClaim {
  wait: number;
  claim: string | undefined;
  read: boolean;
}

/** A shared rate limit that reads where an agent is in the round trip that takes its token (O20). */
export interface ClaimReadingLimit extends EventRateLimit {
  /** Undefined when taking the token needs no round trip (the limit is off): the agent is then asked alone. */
  takeReadingClaim(appId: string, now: number, agentId: string): Promise<TakenWithClaim> | undefined;
}

const readsClaims = (limit: EventRateLimit): limit is ClaimReadingLimit => 'takeReadingClaim' in limit;

/** Makes the per-app rate limit whose buckets every node shares (Redis's, cluster/redis-rate-limit.ts). */
export type SharedBuckets = (
  perSecond: number,
  burst: number,
  shiftMs?: () => number,
) => EventRateLimit | ClaimReadingLimit;

export class ClusterEngine implements Engine {
  readonly eventIdSuffix: string;
  readonly counters: ClusterCounters;
  private listener: EngineListener | undefined;
  private stamp = 0;
  private readonly me: string;
  private readonly localAgents = new Map<string, Connection>();
  /** The claims of agents connected here that the record has not acknowledged yet: whether it took each. */
  private readonly claiming = new Map<string, Promise<boolean>>();
  private readonly holders = new Map<string, Holder>();
  private readonly localApps = new Set<string>();
  private readonly remoteApps = new Map<string, Set<string>>();
  /** Events held here sent to an agent's node that has not yet said they reached the agent (O21). */
  private readonly unconfirmed = new Map<string, { agent: string; node: string }>();

  /** `buckets`: where the rate limit's buckets are shared; by default each node's own (tests on a memory hub). */
  constructor(
    private readonly bus: Bus,
    private readonly log: Logger = silentLogger,
    private readonly buckets: SharedBuckets = (perSecond, burst) => new RateLimiter(perSecond, burst),
    /** When a claim the record did not take is tried again: real time (it waits on Redis), tests step it. */
    private readonly retryClock: Clock = systemClock,
  ) {
    this.me = bus.nodeId;
    this.eventIdSuffix = `-${bus.nodeId}`;
    const unknownMessages = bus.unknownMessages.counts; // counted by the bus (and the control), read with the rest
    this.counters = { framesForGoneAgent: 0, messagesForGoneNode: 0, agentsCutOff: 0, unknownMessages };
    bus.subscribe((from, message) => this.receive(from, message));
    bus.onNodeDown((node) => this.nodeGone(node));
    bus.onLinkLost(() => this.cutOff());
    bus.onLinkRestored(() => this.relink());
    bus.broadcast({ k: 'hello', v });
  }

  listen(listener: EngineListener): void {
    this.listener = listener;
  }

  attachAgent(agentId: string, conn: Connection): Connection | undefined {
    const previous = this.localAgents.get(agentId);
    this.localAgents.set(agentId, conn);
    this.stamp = Math.max(this.stamp + 1, Date.now() * 1000);
    const holder = { node: this.me, stamp: this.stamp };
    this.holders.set(agentId, holder);
    this.claim(agentId, holder);
    // After the claim on the same Redis connection: a node that hears this finds the claim when it asks.
    this.bus.broadcast({ k: 'agent', v, id: agentId, online: true, stamp: holder.stamp });
    return previous === conn ? undefined : previous;
  }

  /** Writes the agent's claim; until the record has it, this node locates the agent only by waiting for it. */
  private claim(agentId: string, holder: Holder): void {
    const claimed = this.bus.claimAgent(agentId, claimOf(holder)).then(
      () => true,
      (err: Error) => {
        // A new connection: the core refuses it and says so. An agent claimed again (on relink) stays connected:
        // without its claim no other node would reach it, so the claim is tried again while the link is up.
        this.log.debug({ agent_id: agentId, err: err.message }, "the record did not take an agent's claim");
        this.claimAgain(agentId, holder);
        return false;
      },
    );
    this.claiming.set(agentId, claimed);
    void claimed.then(() => {
      if (this.claiming.get(agentId) === claimed) this.claiming.delete(agentId);
    });
  }

  private claimAgain(agentId: string, holder: Holder): void {
    this.retryClock.setTimer(CLAIM_AGAIN_MS, () => {
      const still = this.holders.get(agentId) === holder && this.localAgents.has(agentId);
      if (still && this.bus.isLinked() && !this.claiming.has(agentId)) this.claim(agentId, holder);
    });
  }

  detachAgent(agentId: string, conn: Connection): boolean {
    if (this.localAgents.get(agentId) !== conn) return false;
    this.localAgents.delete(agentId);
    const holder = this.holders.get(agentId);
    if (holder?.node !== this.me) return false; // a newer connection on another node holds the agent already
    this.holders.delete(agentId);
    this.bus.releaseAgent(agentId, claimOf(holder));
    this.bus.broadcast({ k: 'agent', v, id: agentId, online: false, stamp: holder.stamp });
    return true;
  }

  isAgentOnline(agentId: string): boolean {
    return this.holders.has(agentId);
  }

  /**
   * An agent connected here is known for sure once the record has its claim (until then, whether the record took
   * it: another node asked meanwhile would not find it); one elsewhere is asked of the record (one Redis round
   * trip per event to it): the gossip that it connected or left may still be on its way.
   */
  locateAgent(agentId: string): boolean | Promise<boolean> {
    if (this.localAgents.has(agentId)) return this.claiming.get(agentId) ?? true;
    return this.lookUp(agentId);
  }

  eventRateLimit(perSecond: number, burst: number, shiftMs?: () => number): EventRateLimit {
    return this.buckets(perSecond, burst, shiftMs);
  }

  /**
   * An event to an agent connected elsewhere asks the record where it is in the round trip that takes its app's
   * token (O20): one round trip per event, not two. The claim is judged only once the checks between pass.
   */
  takeForEvent(limit: EventRateLimit, appId: string, agentId: string, now: number): Taken | Promise<Taken> {
    const both =
      this.localAgents.has(agentId) || !readsClaims(limit) ? undefined : limit.takeReadingClaim(appId, now, agentId);
    if (!both) return takeThenLocate(limit, appId, now, () => this.locateAgent(agentId));
    return both.then(({ wait, claim, read }) => ({
      wait,
      // Connected here meanwhile: known here; the record unanswered: out of reach, as for a lookup (lookUp).
      locate: () => (this.localAgents.has(agentId) ? this.locateAgent(agentId) : read && this.placed(agentId, claim)),
    }));
  }

  private async lookUp(agentId: string): Promise<boolean> {
    let claim: string | undefined;
    try {
      claim = await this.bus.lookupAgent(agentId);
    } catch {
      return false; // the link is cut: the agent is out of reach whoever holds it
    }
    return this.placed(agentId, claim);
  }

  /** Whether the record's claim places the agent on a live node other than this one (then this node's picture does). */
  private placed(agentId: string, claim: string | undefined): boolean {
    const holder = claim === undefined ? undefined : holderOf(claim);
    if (!holder || holder.node === this.me || !this.bus.isNodeUp(holder.node)) return false;
    this.heardAttach(agentId, holder); // the gossip that would have said so is on its way
    return this.holders.get(agentId)?.node === holder.node;
  }

  toAgent(agentId: string, frame: string, event?: EventToAgent): boolean {
    const local = this.localAgents.get(agentId);
    if (local) {
      local.send(frame);
      if (event) this.listener?.eventDelivered(agentId, event);
      return true;
    }
    const holder = this.holders.get(agentId);
    if (!holder || holder.node === this.me) return false;
    const message: BusToAgent = { k: 'to-agent', v, agent: agentId, frame };
    if (event) {
      message.e = event.eventId;
      if (event.traceparent) message.tp = event.traceparent;
      // Until its node says the event reached the agent, a node gone takes the event with it (O21).
      this.unconfirmed.set(event.eventId, { agent: agentId, node: holder.node });
    }
    this.bus.send(holder.node, message);
    return true;
  }

  toEventHome(agentId: string, message: AgentEventMessage): boolean {
    const home = homeOf(message.event_id);
    if (!home || home === this.me) return false;
    if (!this.bus.isNodeUp(home)) {
      this.counters.messagesForGoneNode++;
      return false; // the event ended with its node: INVALID_EVENT_ID, as for any event that is over
    }
    this.bus.send(home, { k: 'agent-msg', v, agent: agentId, msg: message });
    return true;
  }

  cancelToAgent(agentId: string, eventId: string): void {
    const local = this.localAgents.get(agentId);
    if (local) return this.listener?.cancelForAgent(local, eventId);
    const holder = this.holders.get(agentId);
    if (holder && holder.node !== this.me)
      this.bus.send(holder.node, { k: 'cancel-agent', v, agent: agentId, e: eventId });
  }

  cancelAtHome(home: string, connId: number, eventId: string, appId: string): boolean {
    if (!this.bus.isNodeUp(home)) return false;
    this.bus.send(home, { k: 'cancel', v, c: connId, e: eventId, app: appId });
    return true;
  }

  toResumeHome(request: ResumeRequest, connId: number): { home: string; up: boolean } | undefined {
    const home = homeOf(request.event_id);
    if (!home || home === this.me) return undefined;
    if (!this.bus.isNodeUp(home)) return { home, up: false };
    this.bus.send(home, { k: 'resume', v, c: connId, r: request });
    return { home, up: true };
  }

  answerResume(node: string, connId: number, eventId: string, frames: string[]): void {
    this.bus.send(node, { k: 'to-app', v, c: connId, e: eventId, f: frames });
  }

  remoteApp(node: string, connId: number, eventId: string): Connection {
    return {
      id: connId,
      send: (frame) => this.bus.send(node, { k: 'to-app', v, c: connId, e: eventId, f: [frame] }),
      close() {}, // never closed from here: its node holds the socket
    };
  }

  resumerGone(home: string, connId: number, eventId: string): void {
    this.bus.send(home, { k: 'resumer-gone', v, c: connId, e: eventId });
  }

  appPresence(appId: string, online: boolean): void {
    if (online) this.localApps.add(appId);
    else this.localApps.delete(appId);
    this.bus.broadcast({ k: 'app', v, id: appId, online });
  }

  isAppOnline(appId: string): boolean {
    return this.localApps.has(appId) || (this.remoteApps.get(appId)?.size ?? 0) > 0;
  }

  /** The agents this node's picture places on a node that `node` matches. */
  private agentsOn(node: (holder: string) => boolean): string[] {
    return [...this.holders].filter(([, h]) => node(h.node)).map(([id]) => id);
  }

  private receive(from: string, message: BusMessage): void {
    switch (message.k) {
      case 'to-agent':
        return this.deliverToLocalAgent(from, message);
      case 'to-agent-ack':
        return this.heardDelivery(message.e, message.ok);
      case 'agent-msg':
        return this.listener?.agentMessage(message.agent, message.msg);
      case 'agent':
        return message.online
          ? this.heardAttach(message.id, { node: from, stamp: message.stamp })
          : this.heardDetach(message.id, { node: from, stamp: message.stamp });
      case 'app':
        return this.heardApp(message.id, from, message.online);
      case 'hello':
        return this.bus.send(from, this.snapshot());
      case 'cut': {
        // Its link was cut and is back: what went between it and this node in the gap may be lost.
        const agents = this.agentsOn((node) => node === from);
        this.counters.agentsCutOff += agents.length;
        if (agents.length) this.listener?.agentsCutOff(agents);
        return;
      }
      case 'snapshot':
        for (const [id, stamp] of message.agents) this.heardAttach(id, { node: from, stamp });
        for (const id of message.apps) this.heardApp(id, from, true);
        return;
      case 'resume':
        return this.listener?.resumeRequest(from, message.r, message.c);
      case 'to-app':
        return this.listener?.framesForApp(from, message.c, message.e, message.f);
      case 'resumer-gone':
        return this.listener?.resumerGone(from, message.c, message.e);
      case 'cancel':
        return this.listener?.cancelRequest(from, message.c, message.e, message.app);
      case 'cancel-agent': {
        const conn = this.localAgents.get(message.agent);
        return conn && this.listener?.cancelForAgent(conn, message.e);
      }
      case 'ctl':
      case 'ctl-ack':
        return; // the cluster control's (control.ts)
    }
  }

  private deliverToLocalAgent(from: string, { agent: agentId, frame, e: eventId, tp }: BusToAgent): void {
    const conn = this.localAgents.get(agentId);
    if (conn) {
      conn.send(frame);
      if (eventId !== undefined) this.listener?.eventDelivered(agentId, { eventId, traceparent: tp });
    } else {
      this.counters.framesForGoneAgent++;
      this.log.info(
        { agent_id: agentId, event_id: eventId },
        eventId
          ? 'an event for an agent that has left this node was dropped (its home ends it at once)'
          : 'a frame for an agent that has left this node was dropped',
      );
    }
    if (eventId !== undefined) this.bus.send(from, { k: 'to-agent-ack', v, e: eventId, ok: conn !== undefined });
  }

  private heardDelivery(eventId: string, ok: boolean): void {
    const sent = this.unconfirmed.get(eventId);
    if (!sent) return;
    this.unconfirmed.delete(eventId);
    if (!ok) this.listener?.eventUndelivered(sent.agent, eventId);
  }

  private heardAttach(agentId: string, holder: Holder): void {
    this.stamp = Math.max(this.stamp, holder.stamp);
    const current = this.holders.get(agentId);
    if (current && !newer(holder, current)) return; // an older connection: the newer one's node closes it
    this.holders.set(agentId, holder);
    const local = this.localAgents.get(agentId);
    if (local) {
      this.localAgents.delete(agentId);
      this.listener?.agentReplaced(agentId, local);
    }
    this.listener?.agentPresence(agentId, true);
  }

  private heardDetach(agentId: string, holder: Holder): void {
    const current = this.holders.get(agentId);
    if (!current || current.node !== holder.node || current.stamp !== holder.stamp) return; // a connection already replaced
    this.holders.delete(agentId);
    this.listener?.agentPresence(agentId, false);
  }

  private heardApp(appId: string, node: string, online: boolean): void {
    let nodes = this.remoteApps.get(appId);
    if (online) {
      if (!nodes) this.remoteApps.set(appId, (nodes = new Set()));
      nodes.add(node);
    } else if (nodes) {
      nodes.delete(node);
      if (!nodes.size) this.remoteApps.delete(appId);
    }
  }

  private snapshot(): BusSnapshot {
    const agents: [string, number][] = [];
    for (const agentId of this.localAgents.keys()) {
      const holder = this.holders.get(agentId);
      if (holder?.node === this.me) agents.push([agentId, holder.stamp]);
    }
    return { k: 'snapshot', v, agents, apps: [...this.localApps] };
  }

  /** A node is gone: its agents are offline (their events here wait the grace), its apps too. */
  private nodeGone(node: string): void {
    const gone = this.agentsOn((holder) => holder === node);
    for (const agentId of gone) this.holders.delete(agentId);
    for (const [appId, nodes] of this.remoteApps) {
      nodes.delete(node);
      if (!nodes.size) this.remoteApps.delete(appId);
    }
    const lost = [...this.unconfirmed].filter(([, sent]) => sent.node === node);
    for (const [eventId] of lost) this.unconfirmed.delete(eventId);
    this.log.warn(
      { node, agents: gone.length, events_lost: lost.length },
      'a node stopped answering: its agents count as disconnected',
    );
    for (const agentId of gone) this.listener?.agentPresence(agentId, false);
    this.listener?.homesGone(node);
    // Sent to it and never said to have reached the agent: nothing of them is with the agent to come back (O21).
    for (const [eventId, sent] of lost) this.listener?.eventUndelivered(sent.agent, eventId);
  }

  /**
   * This node's link is cut: the agents of other nodes are out of reach (new events to them get AGENT_OFFLINE)
   * and the events held here that wait on them end now, since nothing they send can arrive.
   */
  private cutOff(): void {
    const remote = this.agentsOn((node) => node !== this.me);
    for (const agentId of remote) this.holders.delete(agentId);
    this.remoteApps.clear();
    this.unconfirmed.clear(); // their events end now with the agents cut off
    this.log.warn({ agents: remote.length }, 'the link to the other nodes is cut: their agents are out of reach');
    this.counters.agentsCutOff += remote.length;
    if (remote.length) this.listener?.agentsCutOff(remote);
    this.listener?.homesGone(undefined);
  }

  /**
   * The link is back: the other nodes learn that messages to and from this node may have been lost (they end the
   * events that depended on them), the picture is asked for again, and this node's part told again.
   */
  private relink(): void {
    this.log.info({}, 'the link to the other nodes is back');
    // Redis may have restarted empty: this node's agents are claimed again.
    for (const [agentId, holder] of this.holders) if (holder.node === this.me) this.claim(agentId, holder);
    this.bus.broadcast({ k: 'cut', v });
    this.bus.broadcast({ k: 'hello', v });
    this.bus.broadcast(this.snapshot());
  }
}

/** A claim the record did not take for an agent still connected here is tried again this long after. */
const CLAIM_AGAIN_MS = 1_000;

const claimOf = (holder: Holder) => `${holder.node}:${holder.stamp}`;

function holderOf(claim: string): Holder | undefined {
  const colon = claim.lastIndexOf(':');
  const stamp = Number(claim.slice(colon + 1));
  return colon > 0 && Number.isInteger(stamp) ? { node: claim.slice(0, colon), stamp } : undefined;
}

/** The node an event lives on, from the suffix its id was made with (core/ids.ts); undefined for a plain ULID. */
export function homeOf(eventId: string): string | undefined {
  const dash = eventId.lastIndexOf('-');
  return dash > 0 ? eventId.slice(dash + 1) : undefined;
}
