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

// Beats, forgets the nodes whose heartbeat expired and lists the live ones, on Redis's clock (the nodes' clocks
// may differ, and a test clock must not kill a node): [was this node missing, node, score, node, score, ...].
const HEARTBEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local added = redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
local live = redis.call('ZRANGE', KEYS[1], 0, -1)
table.insert(live, 1, added)
return live`;

// Removes a claim only if it is still the one this connection made (a newer connection elsewhere may have
// claimed the agent since).
const RELEASE = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0`;

// Removes every claim of a node that is gone (run by each node that notices; the second finds nothing).
const FORGET_NODE = `
local all = redis.call('HGETALL', KEYS[1])
local gone = 0
for i = 1, #all, 2 do
  if string.sub(all[i + 1], 1, string.len(ARGV[1])) == ARGV[1] then
    redis.call('HDEL', KEYS[1], all[i])
    gone = gone + 1
  end
end
return gone`;

// Whether a node with this id has beaten within the expiry: a second process with the same NODE_ID would take
// the first one's messages and claims.
const ID_IN_USE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local last = redis.call('ZSCORE', KEYS[1], ARGV[1])
if last and now - tonumber(last) < tonumber(ARGV[2]) then return 1 end
return 0`;

/** Another live node already has this node's id (NODE_ID). */
export class NodeIdInUseError extends Error {}

export const newNodeId = () => randomBytes(5).toString('hex');

/** The hash of which node holds each agent (`node:stamp`), under the bridge's prefix. */
export const claimsKey = (prefix: string) => `${prefix}:agents`;

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
      if (await bus.pub.eval(ID_IN_USE, 1, `${bus.prefix}:nodes`, bus.nodeId, options.expiryMs)) {
        throw new NodeIdInUseError(
          `another live node already has the id ${bus.nodeId} (NODE_ID): give each node its own, or leave NODE_ID unset`,
        );
      }
      await bus.sub.connect();
      await bus.subscribeChannels();
      // A node that restarts with the same NODE_ID holds nothing yet: claims its previous run left are void.
      await bus.pub.eval(FORGET_NODE, 1, bus.claims, `${bus.nodeId}:`);
      await bus.beat();
    } catch (err) {
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
    this.live.add(envelope.f); // a node that speaks is alive, before the next heartbeat lists it
    for (const message of envelope.m) this.hear(envelope.f, message);
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
      this.pub.publish(channel, JSON.stringify({ f: this.nodeId, m: messages } satisfies BusEnvelope)).catch(() => {
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
    const reply = (await this.pub.eval(HEARTBEAT, 1, `${this.prefix}:nodes`, this.nodeId, this.options.expiryMs)) as [
      number,
      ...string[],
    ];
    const [added, ...nodes] = reply;
    const now = new Set(nodes);
    for (const node of this.live) {
      if (now.has(node) || node === this.nodeId) continue;
      this.pub.eval(FORGET_NODE, 1, this.claims, `${node}:`).catch(() => {});
      for (const h of this.downHandlers) h(node);
    }
    this.live = now;
    // Missing from the set after our first beat: the others counted this node gone and dropped what it holds.
    if (added === 1 && this.beats++ > 0 && this.linked) this.relinked('this node had been counted gone');
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
    clearInterval(this.heartbeat);
    this.flush();
    this.unknownMessages.flush();
    this.linked = false;
    // Leaving at once, not by expiry: the other nodes need not wait to know this node's agents are gone.
    if (this.pub.status === 'ready')
      await withTimeout(this.pub.zrem(`${this.prefix}:nodes`, this.nodeId), QUESTION_TIMEOUT_MS).catch(() => {});
    // disconnect, not quit: quit fails on a connection that is reconnecting and leaves it reconnecting for ever.
    this.pub.disconnect();
    this.sub.disconnect();
  }
}
