// The Redis bus and the shared rate limit against a real Redis (TEST_REDIS_URL; `eval "$(bash
// scripts/services.sh start)"` starts one). Without it these tests are pending, never silently passed.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { spawn } from 'node:child_process';
import { thisProcess, type NodeIdentity } from '../../src/cluster/node-identity.js';
import { claimsKey, forgetNode, RedisBus } from '../../src/cluster/redis-bus.js';
import { RedisRateLimiter } from '../../src/cluster/redis-rate-limit.js';
import type { BusMessage } from '../../src/cluster/bus.js';
import { BUS_VERSION } from '../../generated/index.js';
import { silentLogger } from '../../src/shared/logger.js';

const url = process.env.TEST_REDIS_URL;
const until = async (what: string, ok: () => boolean, ms = 5000) => {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe('the Redis engine (TEST_REDIS_URL)', function () {
  let prefix: string;
  const closing: (() => Promise<unknown>)[] = [];
  const bus = async (nodeId: string, expiryMs = 5000) => {
    const b = await RedisBus.connect({ url: url!, nodeId, prefix, heartbeatMs: 100, expiryMs, log: silentLogger });
    closing.push(() => b.close());
    return b;
  };

  before(function () {
    if (!url) this.skip(); // pending: set TEST_REDIS_URL (eval "$(bash scripts/services.sh start)")
  });
  beforeEach(function () {
    prefix = `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  });
  afterEach(async function () {
    await Promise.all(closing.splice(0).map((close) => close()));
  });

  it('sends to one node only, broadcasts to the others but not back, and carries a burst to one node in one PUBLISH, in order', async function () {
    const [a, b, c] = [await bus('a'), await bus('b'), await bus('c')];
    const got: Record<string, [string, BusMessage][]> = { a: [], b: [], c: [] };
    for (const [id, node] of Object.entries({ a, b, c })) node.subscribe((from, m) => got[id]!.push([from, m]));
    for (let i = 0; i < 100; i++) a.send('b', { k: 'to-agent', v: BUS_VERSION, agent: 'tutor', frame: String(i) });
    a.broadcast({ k: 'hello', v: BUS_VERSION });
    await until('the messages', () => got.b!.length === 101 && got.c!.length === 1);
    expect(got.b!.slice(0, 100).map(([, m]) => m.k === 'to-agent' && Number(m.frame))).to.deep.equal([
      ...Array(100).keys(),
    ]);
    expect(got.b!.every(([from]) => from === 'a')).to.equal(true);
    expect(got.c).to.deep.equal([['a', { k: 'hello', v: BUS_VERSION }]]);
    expect(got.a).to.deep.equal([]);
    expect(a.traffic).to.deep.include({ publishes: 2, messages: 101, dropped: 0 });
  });

  it('counts and drops what it cannot read (another version or kind, an envelope of another shape), and reads the rest (O16)', async function () {
    const a = await bus('a');
    const got: [string, BusMessage][] = [];
    a.subscribe((from, m) => got.push([from, m]));
    const raw = new Redis(url!);
    closing.push(() => raw.quit());
    const publish = (envelope: unknown) => raw.publish(`${prefix}:node:a`, JSON.stringify(envelope));
    await publish({
      f: 'x',
      m: [
        { k: 'hello', v: 2 },
        { k: 'gossip', v: 1 },
        { k: 'hello', v: 1 },
      ],
    });
    await publish({ f: 'y', messages: [{ k: 'hello', v: 1 }] });
    await until('the readable message', () => got.length === 1 && a.unknownMessages.counts.version === 2);
    expect(got).to.deep.equal([['x', { k: 'hello', v: 1 }]]);
    expect(a.unknownMessages.counts).to.deep.equal({ version: 2, kind: 1, op: 0 });
  });

  it('knows the live nodes, and tells the others when one leaves', async function () {
    const [a, b] = [await bus('a'), await bus('b')];
    await until('b seen by a', () => a.isNodeUp('b'));
    expect(a.peers()).to.deep.equal(['b']);
    const down: string[] = [];
    a.onNodeDown((node) => down.push(node));
    await b.close();
    await until('b gone', () => down.length === 1);
    expect(down).to.deep.equal(['b']);
    expect(a.isNodeUp('b')).to.equal(false);
  });

  it('refuses a second live node with the same id, and takes the id once the first has left', async function () {
    const first = await bus('a');
    let refused: Error | undefined;
    await bus('a').catch((err: Error) => (refused = err));
    expect(refused?.message).to.match(
      new RegExp(
        `^another live node already has the id a \\(NODE_ID\\): pid ${process.pid} on this machine, still running, its last heartbeat \\d+ ms ago; give each node its own, or leave NODE_ID unset$`,
      ),
    );
    await first.close();
    expect((await bus('a')).nodeId).to.equal('a');
  });

  it('counts a node that speaks with a new incarnation as gone first, then hears what the new process says (O22)', async function () {
    const [a, b] = [await bus('a'), await bus('b')];
    const heard: string[] = [];
    a.onNodeDown((node) => heard.push(`down ${node}`));
    a.subscribe((from, m) => heard.push(`${m.k} from ${from}`));
    b.broadcast({ k: 'hello', v: BUS_VERSION });
    await until('the first hello', () => heard.length === 1);
    const raw = new Redis(url!);
    closing.push(() => raw.quit());
    // As b's process restarted under its id within a heartbeat would speak: its id, a new incarnation.
    const envelope = { f: 'b', i: 'restarted', m: [{ k: 'hello', v: BUS_VERSION }] };
    await raw.publish(`${prefix}:all`, JSON.stringify(envelope));
    await until('the restart heard', () => heard.length === 3);
    expect(heard).to.deep.equal(['hello from b', 'down b', 'hello from b']);
    expect(a.isNodeUp('b')).to.equal(true);
  });

  describe('an id whose heartbeat is fresh but whose process is not a live node here (O22)', function () {
    /** A heartbeat of node `a` a moment ago, with `identity` beside it (none: as an older release left it). */
    async function heartbeatOf(identity: Partial<NodeIdentity> | undefined): Promise<void> {
      const raw = new Redis(url!);
      closing.push(() => raw.quit());
      await raw.zadd(`${prefix}:nodes`, Date.now(), 'a');
      if (identity) await raw.hset(`${prefix}:node-identities`, 'a', JSON.stringify(identity));
    }
    const here = () => {
      const { boot, pidns, host } = thisProcess();
      return { host, ...(boot ? { boot } : {}), ...(pidns ? { pidns } : {}) };
    };
    /** A pid that ran on this machine and has ended (and been reaped). */
    const endedPid = () =>
      new Promise<number>((resolve) => {
        const child = spawn('true');
        child.once('exit', () => resolve(child.pid!));
      });

    it('takes it over when that process ran on this machine, in this pid namespace, and has ended', async function () {
      if (!here().boot) this.skip(); // pending: no /proc (not Linux), nothing can be proved
      await heartbeatOf({ i: 'killed', pid: await endedPid(), ...here() });
      expect((await bus('a')).nodeId).to.equal('a');
    });

    it('refuses it when that process runs on another machine, or says nowhere (an older release)', async function () {
      await heartbeatOf({ i: 'elsewhere', pid: await endedPid(), host: 'other-host', boot: 'another-boot' });
      const refused = await bus('a').then(
        () => undefined,
        (err: Error) => err.message,
      );
      expect(refused).to.match(/^another live node already has the id a \(NODE_ID\): pid \d+ on host other-host, /);
      await heartbeatOf(undefined);
      const raw = new Redis(url!);
      closing.push(() => raw.quit());
      await raw.hdel(`${prefix}:node-identities`, 'a');
      const older = await bus('a').then(
        () => undefined,
        (err: Error) => err.message,
      );
      expect(older).to.match(/: a node that does not say where it runs \(an older release\), /);
    });

    it('gives the id to one of two processes that start at once after it', async function () {
      if (!here().boot) this.skip();
      await heartbeatOf({ i: 'killed', pid: await endedPid(), ...here() });
      const both = await Promise.allSettled([bus('a'), bus('a')]);
      expect(both.map((r) => r.status).sort()).to.deep.equal(['fulfilled', 'rejected']);
    });
  });

  it("forgets a gone node's claims, but not those of a node that has beaten again since it was counted gone", async function () {
    const raw = new Redis(url!);
    closing.push(() => raw.quit());
    await raw.hset(claimsKey(prefix), 'tutor', 'ghost:1', 'coach', 'other:2');
    await raw.zadd(`${prefix}:nodes`, Date.now(), 'ghost'); // back after Redis restarted: it beat, then claimed
    expect(await forgetNode(raw, prefix, 'ghost', 5000)).to.equal(-1);
    expect(await raw.hgetall(claimsKey(prefix))).to.deep.equal({ tutor: 'ghost:1', coach: 'other:2' });
    await raw.zadd(`${prefix}:nodes`, Date.now() - 6000, 'ghost'); // its last beat older than the expiry
    expect(await forgetNode(raw, prefix, 'ghost', 5000)).to.equal(1);
    expect(await raw.hgetall(claimsKey(prefix))).to.deep.equal({ coach: 'other:2' });
  });

  it('counts a node gone once its heartbeat is older than the expiry, even if it never said goodbye', async function () {
    const a = await bus('a', 400);
    const ghost = new Redis(url!);
    closing.push(() => ghost.quit());
    await ghost.zadd(`${prefix}:nodes`, Date.now(), 'ghost'); // one heartbeat, then nothing (as after SIGKILL)
    const down: string[] = [];
    a.onNodeDown((node) => down.push(node));
    await until('the ghost seen', () => a.isNodeUp('ghost'));
    const seen = Date.now();
    await until('the ghost gone', () => down.includes('ghost'));
    expect(Date.now() - seen).to.be.below(400 + 100 + 300); // expiry + one heartbeat + slack
  });

  it("shares one bucket between nodes, refilled on Redis's clock (moved by the test clock's advance)", async function () {
    const [r1, r2] = [new Redis(url!), new Redis(url!)];
    closing.push(
      () => r1.quit(),
      () => r2.quit(),
    );
    let shift = 0;
    const n1 = new RedisRateLimiter(r1, 2, 3, silentLogger, prefix, () => shift);
    const n2 = new RedisRateLimiter(r2, 2, 3, silentLogger, prefix, () => shift);
    expect([await n1.take('app', 0), await n2.take('app', 0), await n1.take('app', 0)]).to.deep.equal([0, 0, 0]);
    expect(await n2.take('app', 0)).to.be.closeTo(0.5, 0.02); // the 4th, on the other node: half a second at 2/s
    expect(await n1.take('other-app', 0)).to.equal(0);
    shift = 500;
    expect(await n2.take('app', 0)).to.equal(0);
    expect(n1.fallbacks + n2.fallbacks).to.equal(0);
  });

  it("neither locks out nor overgrants when Redis's clock steps back an hour, forward 400 days and back (F1)", async function () {
    const redis = new Redis(url!);
    closing.push(() => redis.quit());
    let shift = 0;
    const limiter = new RedisRateLimiter(redis, 2, 3, silentLogger, prefix, () => shift);
    const drain = async () => {
      for (let admitted = 0; ; admitted++) {
        const wait = await limiter.take('stepped', 0);
        if (wait > 0) return { admitted, wait };
      }
    };
    expect((await drain()).admitted).to.equal(3);
    shift = -3_600_000;
    expect((await drain()).wait).to.be.at.most(0.5); // not the hour
    shift += 600;
    expect(await limiter.take('stepped', 0)).to.equal(0); // refilled from the new time on
    shift = 400 * 86_400_000;
    expect((await drain()).admitted).to.be.within(3, 4); // a full bucket (and what the real milliseconds refilled), not 400 days' worth
    shift = 0;
    expect((await drain()).wait).to.be.at.most(0.5);
  });

  it("decides with the node's own bucket while Redis does not answer, and counts it", async function () {
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    const limiter = new RedisRateLimiter(dead, 1, 1, silentLogger, prefix);
    expect(await limiter.take('app', 0)).to.equal(0);
    expect(await limiter.take('app', 0)).to.equal(1);
    expect(limiter.fallbacks).to.equal(2);
    dead.disconnect();
  });
});
