// An app's event on one node to an agent on another asks Redis one thing (O20): the script that takes the app's
// token also reads the agent's claim. Two nodes on a real Redis (TEST_REDIS_URL), each command of the asking node's
// connection counted as ioredis sends it (its heartbeat and its publishes, which carry no event's question, aside).
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { ClusterEngine } from '../../src/cluster/cluster-engine.js';
import { RedisBus } from '../../src/cluster/redis-bus.js';
import { RedisRateLimiter } from '../../src/cluster/redis-rate-limit.js';
import type { EventRateLimit } from '../../src/core/rate-limit.js';
import { silentLogger } from '../../src/shared/logger.js';
import { fakeConnection, RecordingListener, until } from '../helpers/engine-rig.js';

const url = process.env.TEST_REDIS_URL;

/** Counts the commands `redis` sends from now on, but the heartbeat's (on the nodes' key) and PUBLISH. */
function countCommands(redis: Redis, prefix: string): { sent: string[] } {
  const counted = { sent: [] as string[] };
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: { name: string; args: unknown[] }, ...rest: unknown[]) => {
    const heartbeat = command.args.some((a) => String(a) === `${prefix}:nodes`);
    if (!heartbeat && command.name !== 'publish') counted.sent.push(command.name);
    return (send as (...args: unknown[]) => unknown)(command, ...rest);
  }) as Redis['sendCommand'];
  return counted;
}

describe("an event's checks across nodes: one Redis round trip (TEST_REDIS_URL)", function () {
  let prefix: string;
  let buses: RedisBus[];
  let engines: ClusterEngine[];

  before(function () {
    if (!url) this.skip(); // pending: set TEST_REDIS_URL (eval "$(bash scripts/services.sh start)")
  });
  beforeEach(async function () {
    prefix = `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    buses = [];
    for (const nodeId of ['a', 'b'])
      buses.push(
        await RedisBus.connect({ url: url!, nodeId, prefix, heartbeatMs: 100, expiryMs: 500, log: silentLogger }),
      );
    engines = buses.map(
      (bus) =>
        new ClusterEngine(
          bus,
          silentLogger,
          (perSecond, burst, shiftMs) =>
            new RedisRateLimiter(bus.commands, perSecond, burst, silentLogger, bus.prefix, shiftMs),
        ),
    );
    await until('the nodes seeing each other', () => buses.every((bus) => bus.peers().length === 1));
  });
  afterEach(async function () {
    await Promise.all(buses.map((bus) => bus.close()));
  });

  /** `events` events of one app at the agent, from node b: what each was told, and the commands b sent. */
  async function eventsFromB(limit: EventRateLimit, events: number) {
    const b = engines[1]!;
    await (await b.takeForEvent(limit, 'warm-up', 'tutor', 0)).locate(); // ioredis loads the scripts once
    const counted = countCommands(buses[1]!.commands, prefix);
    const answers: [number, boolean][] = [];
    for (let i = 0; i < events; i++) {
      const taken = await b.takeForEvent(limit, 'classroom', 'tutor', 0);
      answers.push([taken.wait, await taken.locate()]);
    }
    return { answers, sent: counted.sent };
  }

  it('takes the token and reads the claim of an agent on another node in one command per event', async function () {
    const [a, b] = engines as [ClusterEngine, ClusterEngine];
    a.attachAgent('tutor', fakeConnection());
    expect(await a.locateAgent('tutor'), 'the claim in Redis').to.equal(true);
    const { answers, sent } = await eventsFromB(b.eventRateLimit(100, 100), 10);
    expect(answers).to.deep.equal(Array(10).fill([0, true]));
    expect(sent).to.deep.equal(Array(10).fill('evalsha'));
  });

  it('asks one command per event for an agent on its own node, for one connected nowhere, and with the limit off', async function () {
    const [a, b] = engines as [ClusterEngine, ClusterEngine];
    const nowhere = await eventsFromB(b.eventRateLimit(100, 100), 3);
    expect(nowhere.answers).to.deep.equal(Array(3).fill([0, false]));
    expect(nowhere.sent).to.deep.equal(Array(3).fill('evalsha'));

    b.attachAgent('tutor', fakeConnection());
    const here = await eventsFromB(b.eventRateLimit(100, 100), 3);
    expect(here.answers).to.deep.equal(Array(3).fill([0, true]));
    expect(here.sent).to.deep.equal(Array(3).fill('evalsha')); // the token only: the agent is known here

    const heard = new RecordingListener();
    b.listen(heard);
    a.attachAgent('tutor', fakeConnection()); // newer: b's connection is replaced, the agent is on a now
    await until("b hearing of a's connection", () => heard.calls('agentReplaced').length > 0);
    const off = await eventsFromB(b.eventRateLimit(0, 0), 3);
    expect(off.answers).to.deep.equal(Array(3).fill([0, true]));
    expect(off.sent).to.deep.equal(Array(3).fill('hget')); // no token to take: the claim alone
  });

  it('reads the claim with the token even when the app is over its rate: the wait, and nothing more', async function () {
    const [a, b] = engines as [ClusterEngine, ClusterEngine];
    a.attachAgent('tutor', fakeConnection());
    await a.locateAgent('tutor');
    const { answers, sent } = await eventsFromB(b.eventRateLimit(1, 2), 3);
    expect(answers.map(([wait]) => wait > 0)).to.deep.equal([false, false, true]);
    expect(sent).to.deep.equal(Array(3).fill('evalsha'));
  });
});
