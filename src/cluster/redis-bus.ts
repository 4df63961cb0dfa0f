// The bus over Redis: one pub/sub channel per node (frames go only to the node that needs them) and one for
// everyone (presence, control); a sorted set of heartbeats says which nodes are alive. Messages to one node
// within one turn of the event loop go out as one PUBLISH, in order, so a burst of fragments costs one Redis
// message, not one each.
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import type { BusEnvelope } from '../../generated/index.js';
import type { Logger } from '../shared/logger.js';
import type { Bus, BusMessage } from './bus.js';
import { BusListeners } from './bus-listeners.js';
import {
  closed,
  describeHolder,
  isEndedPredecessor,
  opened,
  parseIdentity,
  thisProcess,
  type NodeIdentity,
} from './node-identity.js';

export interface RedisBusOptions {
  url: string;
  /** This node's id (letters and digits); default a random one, new at every start. */
  nodeId?: string;
  /** Prefix of every key and channel, so that several bridges can share one Redis. */
  prefix?: string;
  heartbeatMs: number;
  /** A node whose heartbeat is older than this is gone (killed, cut off). */
  expiryMs: number;
  log: Logger;
}

/** What went through Redis, for metrics and the benchmark. */
export interface BusTraffic {
  /** PUBLISH commands sent. */
  publishes: number;
  /** Messages carried by them (one PUBLISH carries every message to one node of one event-loop turn). */
  messages: number;
  /** Messages that could not be sent: the link was down (their loss is accounted for by the engine). */
  dropped: number;
}

// Beats (with this process's identity beside it: node-identity.ts), forgets the nodes whose heartbeat expired and
// lists the live ones, on Redis's clock (the nodes' clocks may differ, and a test clock must not kill a node):
// [was this node missing, node, node, ...].
const HEARTBEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local added = redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))) do
  redis.call('HDEL', KEYS[2], gone)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
local live = redis.call('ZRANGE', KEYS[1], 0, -1)
table.insert(live, 1, added)
return live`;

// Removes a claim only if it is still the one this connection made (a newer connection elsewhere may have
// claimed the agent since).
const RELEASE = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0`;

// Removes every claim of a node (ARGV[1]: its id and a colon): at its own start (a restarted node holds nothing yet;
// ARGV[2] '0'), or counted gone by another node, unless it has beaten again within the expiry ARGV[2] (KEYS[2], the
// heartbeats; ARGV[3], its id): a node back after Redis restarted empty may beat and claim its agents again between
// the beat that found it missing and this script, and its new claims must stay (they were deleted under load, and
// its agents could not be reached from the other nodes until they reconnected). Returns the claims removed, or -1.
const FORGET_NODE = `
if tonumber(ARGV[2]) > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local last = redis.call('ZSCORE', KEYS[2], ARGV[3])
  if last and now - tonumber(last) < tonumber(ARGV[2]) then return -1 end
end
local all = redis.call('HGETALL', KEYS[1])
local gone = 0
for i = 1, #all, 2 do
  if string.sub(all[i + 1], 1, string.len(ARGV[1])) == ARGV[1] then
    redis.call('HDEL', KEYS[1], all[i])
    gone = gone + 1
  end
end
return gone`;

// Takes the id ARGV[1] with this process's identity ARGV[3] (its first beat), unless a node with it has beaten
// within the expiry ARGV[2] and its recorded identity is not ARGV[4] (the predecessor this process proved ended, or
// '' for none): a second process with the same NODE_ID would take the first one's messages and claims. Checked and
// taken in one script, so that of two processes starting at once only one gets the id. [1], or [0, the live
// holder's identity (false: none recorded), its heartbeat's age in ms].
const JOIN = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local last = redis.call('ZSCORE', KEYS[1], ARGV[1])
if last and now - tonumber(last) < tonumber(ARGV[2]) then
  local holder = redis.call('HGET', KEYS[2], ARGV[1])
  if ARGV[4] == '' or holder ~= ARGV[4] then return {0, holder, now - tonumber(last)} end
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return {1}`;

// Leaves at once: the heartbeat, and the identity if it is still this process's.
const LEAVE = `
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('HGET', KEYS[2], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[2], ARGV[1]) end
return 1`;

/** Another live node already has this node's id (NODE_ID). */
export class NodeIdInUseError extends Error {}

export const newNodeId = () => randomBytes(5).toString('hex');

/** The hash of which node holds each agent (`node:stamp`), under the bridge's prefix. */
export const claimsKey = (prefix: string) => `${prefix}:agents`;
const heartbeatsKey = (prefix: string) => `${prefix}:nodes`;

/** How long a node waits for Redis to answer a question (where is an agent, the rate limit) before it decides alone. */
export const QUESTION_TIMEOUT_MS = 1000;

/** `promise`, or a rejection once `ms` have passed (what it was waiting for is not cancelled, only no longer awaited). */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from Redis within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

export class RedisBus extends BusListeners implements Bus {
  readonly nodeId: string;
  /** This process: its incarnation and where it runs, beside its heartbeat (O22). */
  readonly identity: NodeIdentity = thisProcess();
  private readonly identityText = JSON.stringify(this.identity);
  /** The incarnation each other node last spoke with: a new one is a restart under the same NODE_ID (O22). */
  private readonly incarnations = new Map<string, string>();
  readonly traffic: BusTraffic = { publishes: 0, messages: 0, dropped: 0 };
  readonly prefix: string;
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly outbox = new Map<string, BusMessage[]>();
  private flushing = false;
  private live = new Set<string>();
  private linked = false;
  private beats = 0;
  private heartbeat: NodeJS.Timeout | undefined;

  private constructor(private readonly options: RedisBusOptions) {
    super(options.log);
    this.nodeId = options.nodeId ?? newNodeId();
    this.prefix = options.prefix ?? 'bridge';
    // No offline queue: what cannot be sent now fails now (and is counted), rather than piling up in memory for a
    // Redis that may be gone for minutes. No command timeout either: a PUBLISH answered late was still delivered
    // (under load, 1 s passed and fragments arrived that a timeout had counted lost), and one that really fails
    // fails with the connection, whose loss ends what depended on it. Questions wait at most QUESTION_TIMEOUT_MS.
    const common = {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (n: number) => Math.min(n * 100, 1000),
    };
    this.pub = new Redis(options.url, { ...common, connectionName: `bridge-${this.nodeId}-pub` });
    this.sub = new Redis(options.url, {
      ...common,
      connectionName: `bridge-${this.nodeId}-sub`,
      autoResubscribe: false,
    });
  }

  /** Connects, subscribes and beats once: a bridge does not start on a Redis it cannot use. */
  static async connect(options: RedisBusOptions): Promise<RedisBus> {
    const bus = new RedisBus(options);
    try {
      await bus.pub.connect();
      await bus.join();
      await bus.sub.connect();
      await bus.subscribeChannels();
      // A node that restarts with the same NODE_ID holds nothing yet: claims its previous run left are void.
      await forgetNode(bus.pub, bus.prefix, bus.nodeId, 0);
      await bus.beat();
    } catch (err) {
      closed(bus.identity);
      bus.pub.disconnect();
      bus.sub.disconnect();
      throw err;
    }
    bus.linked = true;
    bus.watchLink();
    bus.heartbeat = setInterval(() => void bus.beat().catch(() => {}), options.heartbeatMs);
    bus.heartbeat.unref();
    return bus;
  }

  /**
   * Takes this node's id, or throws NodeIdInUseError: a live node has it, unless that node is provably this
   * process's own predecessor, ended without leaving (killed, crashed), whose heartbeat has not expired yet (O22).
   */
  private async join(): Promise<void> {
    const take = (predecessor: string) =>
      this.pub.eval(
        JOIN,
        2,
        this.heartbeats,
        this.identities,
        this.nodeId,
        this.options.expiryMs,
        this.identityText,
        predecessor,
      ) as Promise<[1] | [0, string | null, number]>;
    opened(this.identity); // from now on, as far as this process knows: closed again if refused (connect)
    const first = await take('');
    if (first[0] === 1) return;
    const [, holder, ageMs] = first;
    const found = parseIdentity(holder);
    if (holder && found && isEndedPredecessor(found, this.identity) && (await take(holder))[0] === 1) {
      this.options.log.warn(
        { node: this.nodeId, pid: found.pid, heartbeat_age_ms: ageMs },
        'NODE_ID taken over from its previous process on this machine, which ended without leaving',
      );
      return;
    }
    throw new NodeIdInUseError(
      `another live node already has the id ${this.nodeId} (NODE_ID): ${describeHolder(found, this.identity)}, its last heartbeat ${ageMs} ms ago; ` +
        'give each node its own, or leave NODE_ID unset',
    );
  }

  private get heartbeats(): string {
    return heartbeatsKey(this.prefix);
  }

  private get identities(): string {
    return `${this.prefix}:node-identities`;
  }

  private channel(node: string): string {
    return `${this.prefix}:node:${node}`;
  }

  private get everyone(): string {
    return `${this.prefix}:all`;
  }

  private async subscribeChannels(): Promise<void> {
    this.sub.removeAllListeners('messageBuffer');
    await this.sub.subscribe(this.channel(this.nodeId), this.everyone);
    this.sub.on('messageBuffer', (_channel: Buffer, payload: Buffer) => this.receive(payload));
  }

  private receive(payload: Buffer): void {
    let envelope: BusEnvelope;
    try {
      envelope = JSON.parse(payload.toString('utf8')) as BusEnvelope;
    } catch {
      return this.options.log.warn({}, 'a bus message that is not JSON was ignored');
    }
    if (envelope.f === this.nodeId) return; // our own broadcast
    // An envelope of another shape is another release's wire: counted as a version this node does not know (O16).
    if (!Array.isArray(envelope.m)) return void this.unknownMessages.record('version', envelope.f, 'envelope');
    if (typeof envelope.i === 'string') this.heardIncarnation(envelope.f, envelope.i);
    this.live.add(envelope.f); // a node that speaks is alive, before the next heartbeat lists it
    for (const message of envelope.m) this.hear(envelope.f, message);
  }

  /**
   * A node that speaks with a new incarnation restarted under its NODE_ID, maybe within a heartbeat (its previous
   * process killed, O22): what the previous one held is gone, before anything the new one says is heard. Its claims
   * are not forgotten here: the new one forgot its predecessor's itself, and has made its own since.
   */
  private heardIncarnation(node: string, incarnation: string): void {
    const known = this.incarnations.get(node);
    this.incarnations.set(node, incarnation);
    if (known === undefined || known === incarnation) return;
    this.options.log.warn({ node }, 'a node restarted under the same NODE_ID: what its previous process held is gone');
    for (const h of this.downHandlers) h(node);
  }

  send(node: string, message: BusMessage): void {
    this.queue(this.channel(node), message);
  }

  broadcast(message: BusMessage): void {
    this.queue(this.everyone, message);
  }

  private queue(channel: string, message: BusMessage): void {
    const pending = this.outbox.get(channel);
    if (pending) pending.push(message);
    else this.outbox.set(channel, [message]);
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.flushing = false;
    for (const [channel, messages] of this.outbox) {
      if (!this.linked) {
        this.traffic.dropped += messages.length;
        continue;
      }
      this.traffic.publishes++;
      this.traffic.messages += messages.length;
      const envelope: BusEnvelope = { f: this.nodeId, i: this.identity.i, m: messages };
      this.pub.publish(channel, JSON.stringify(envelope)).catch(() => {
        this.traffic.dropped += messages.length;
      });
    }
    this.outbox.clear();
  }

  /** The connection for commands (the shared rate limit): the other one only listens. */
  get commands(): Redis {
    return this.pub;
  }

  isNodeUp(node: string): boolean {
    return this.live.has(node);
  }

  peers(): string[] {
    return [...this.live].filter((n) => n !== this.nodeId);
  }

  isLinked(): boolean {
    return this.linked;
  }

  private get claims(): string {
    return claimsKey(this.prefix);
  }

  async claimAgent(agentId: string, holder: string): Promise<void> {
    if (!this.linked) throw new Error('the link to Redis is down');
    await withTimeout(this.pub.hset(this.claims, agentId, holder), QUESTION_TIMEOUT_MS);
  }

  releaseAgent(agentId: string, holder: string): void {
    if (this.linked) this.pub.eval(RELEASE, 1, this.claims, agentId, holder).catch(() => {});
  }

  async lookupAgent(agentId: string): Promise<string | undefined> {
    return (await withTimeout(this.pub.hget(this.claims, agentId), QUESTION_TIMEOUT_MS)) ?? undefined;
  }

  private async beat(): Promise<void> {
    const args = [this.nodeId, this.options.expiryMs, this.identityText];
    const reply = (await this.pub.eval(HEARTBEAT, 2, this.heartbeats, this.identities, ...args)) as [
      number,
      ...string[],
    ];
    const [added, ...nodes] = reply;
    const now = new Set(nodes);
    for (const node of this.live) {
      if (now.has(node) || node === this.nodeId) continue;
      forgetNode(this.pub, this.prefix, node, this.options.expiryMs).catch(() => {});
      this.incarnations.delete(node); // gone: whichever process comes back under its id is new
      for (const h of this.downHandlers) h(node);
    }
    this.live = now;
    // Missing from the set after our first beat: the others counted this node gone and dropped what it holds.
    const first = this.beats++ === 0;
    if (added === 1 && !first && this.linked) this.relinked('this node had been counted gone');
  }

  private watchLink(): void {
    const down = () => {
      if (!this.linked) return;
      this.linked = false;
      this.options.log.warn(
        { node: this.nodeId },
        'lost the connection to Redis: this node is cut off from the others',
      );
      for (const h of this.lostHandlers) h();
    };
    const up = () => {
      if (this.linked || this.pub.status !== 'ready' || this.sub.status !== 'ready') return;
      this.subscribeChannels()
        .then(() => this.beat())
        .then(() => {
          if (this.linked) return;
          this.linked = true;
          this.relinked('the connection to Redis is back');
        })
        .catch(() => {}); // the next 'ready' tries again
    };
    for (const client of [this.pub, this.sub]) {
      client.on('close', down);
      client.on('ready', up);
      client.on('error', (err: Error) => this.options.log.debug({ err: err.message }, 'Redis connection error'));
    }
  }

  private relinked(why: string): void {
    this.options.log.info({ node: this.nodeId }, why);
    for (const h of this.restoredHandlers) h();
  }

  async close(): Promise<void> {
    closed(this.identity);
    clearInterval(this.heartbeat);
    this.flush();
    this.unknownMessages.flush();
    this.linked = false;
    // Leaving at once, not by expiry: the other nodes need not wait to know this node's agents are gone.
    if (this.pub.status === 'ready') {
      const leaving = this.pub.eval(LEAVE, 2, this.heartbeats, this.identities, this.nodeId, this.identityText);
      await withTimeout(leaving, QUESTION_TIMEOUT_MS).catch(() => {});
    }
    // disconnect, not quit: quit fails on a connection that is reconnecting and leaves it reconnecting for ever.
    this.pub.disconnect();
    this.sub.disconnect();
  }
}

/**
 * Removes the claims of `node`; with `expiryMs`, of a node counted gone, unless it has beaten again within it (-1);
 * else how many.
 */
export function forgetNode(redis: Redis, prefix: string, node: string, expiryMs: number): Promise<number> {
  const keys = [claimsKey(prefix), heartbeatsKey(prefix)];
  return redis.eval(FORGET_NODE, 2, ...keys, `${node}:`, expiryMs, node) as Promise<number>;
}
