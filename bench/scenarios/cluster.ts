// Scenario cluster (not in the default set: it needs PostgreSQL and Redis): what crossing nodes costs (O14).
//   hop: a two-node bridge, the streaming load (M agents x N apps) with the apps and the agents on the same node,
//        then with the apps on one node and the agents on the other: the same processes, database and Redis, only
//        the placement differs; closed loop and open loop at --cluster-rate.
//   Redis: each node's bridge_cluster_bus_total and bridge_tokens_forwarded_total around every run, so PUBLISH
//        commands and messages per fragment forwarded; the generator's sequence numbers say whether any fragment
//        was lost or reordered on the way.
//   two vs one: two generators, each with half the agents and apps of its own, against one node alone (PostgreSQL,
//        and SQLite for scenario 1's store), then against one node each of the two-node bridge.
//   Socket.IO: last, the hop's runs again on two Socket.IO relays over @socket.io/redis-adapter (./cluster-socketio.ts),
//        reported beside the bridge's hop (./cluster-hop.ts).
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { StreamingConfig } from '../load/streaming.js';
import { createBenchDatabase, type BenchDatabase } from '../postgres.js';
import { provision, shutdown, startBridge, type Credentials } from '../processes.js';
import { scrape } from './cluster-counters.js';
import { generator, measureRun } from './cluster-run.js';
import { socketIoTwoNodes } from './cluster-socketio.js';
import type { ClusterRun, Placement, Setup } from './cluster-figures.js';
import { clusterTables, skippedTable } from './cluster-tables.js';
import type { Settings } from './settings.js';

type Node = Awaited<ReturnType<typeof startBridge>>;

const NEEDS =
  'PostgreSQL and Redis: eval "$(bash scripts/services.sh start)" exports TEST_POSTGRES_URL and TEST_REDIS_URL (or give --postgres-url and --redis-url; a Redis database number of its own, e.g. redis://127.0.0.1:56379/5, keeps its keys apart from other bridges\')';

/** Agents [0, half) and apps [0, n) for the first generator, the rest and apps [n, 2n) for the second. */
function halves(creds: Credentials, n: number): Credentials[] {
  const half = Math.ceil(creds.agents.length / 2);
  return [
    { agents: creds.agents.slice(0, half), apps: creds.apps.slice(0, n) },
    { agents: creds.agents.slice(half), apps: creds.apps.slice(n, 2 * n) },
  ];
}

export async function cluster(s: Settings) {
  if (!s.postgresUrl || !s.redisUrl) {
    console.error(`Scenario cluster: skipped, it needs ${NEEDS}`);
    return { json: { skipped: `needs ${NEEDS}` }, tables: [skippedTable(`needs ${NEEDS}`)], targets: [], errors: 0 };
  }
  console.error(`Scenario cluster: two nodes over PostgreSQL and Redis, ${s.warmupS + s.durationS} s per run`);
  const redis = new Redis(s.redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 5000, lazyConnect: true });
  const runs: ClusterRun[] = [];
  let socketIoError: string | null;
  try {
    await redis.connect();
    await twoNodes(s, redis, runs);
    await oneNode(s, redis, runs, 'one node, PostgreSQL');
    await oneNode(s, redis, runs, 'one node, SQLite');
    // After the bridge's runs, so that they are taken as they were before the peer was added.
    socketIoError = await socketIoTwoNodes(s, redis, runs);
  } catch (err) {
    const why = `could not run: ${(err as Error).message.split('\n')[0]}`;
    console.error(`Scenario cluster ${why}\n${(err as Error).message}`);
    return { json: { error: why, runs }, tables: [skippedTable(why)], targets: [], errors: 1 };
  } finally {
    redis.disconnect();
  }
  return clusterTables(s, runs, socketIoError);
}

/** Every run of the two-node bridge: the hop (same node, then different nodes), then one generator per node. */
async function twoNodes(s: Settings, redis: Redis, runs: ClusterRun[]): Promise<void> {
  const db = await createBenchDatabase(s.postgresUrl!);
  // Per-node channels are named by node id on a Redis server shared by every database number: ids of this run's
  // own, so no other bridge's node hears these nodes' messages.
  const ids = ['a', 'b'].map((x) => `bench${randomBytes(4).toString('hex')}${x}`);
  const nodes: { node?: Node; dir: string }[] = ids.map(() => ({ dir: mkdtempSync(join(tmpdir(), 'bench-')) }));
  try {
    for (const [i, slot] of nodes.entries()) {
      slot.node = await startBridge(slot.dir, s.profileDir, {
        DATABASE_URL: db.url,
        REDIS_URL: s.redisUrl!,
        NODE_ID: ids[i]!,
      });
    }
    const [n1, n2] = nodes.map((x) => x.node!) as [Node, Node];
    await untilPeers([n1, n2]);
    const creds = await provision(n1.admin, s.m, 2 * s.n);
    const all = { agents: creds.agents, apps: creds.apps.slice(0, s.n) };
    const run = (placement: Placement, rate: number | undefined, configs: StreamingConfig[]) =>
      measureRun(s, 'two nodes', placement, rate, [n1, n2], redis, configs);
    for (const rate of [undefined, s.clusterRate]) {
      runs.push(await run('same', rate, [generator(s, rate, n1, n1, all)]));
      runs.push(await run('cross', rate, [generator(s, rate, n1, n2, all)]));
    }
    const [a, b] = halves(creds, s.n);
    runs.push(
      await run('halves', undefined, [generator(s, undefined, n1, n1, a!), generator(s, undefined, n2, n2, b!)]),
    );
  } finally {
    for (const slot of nodes) await shutdown(slot.node, slot.dir);
    await db.drop();
  }
}

/** The two generators of the two-node run's halves against one node alone (no Redis). */
async function oneNode(s: Settings, redis: Redis, runs: ClusterRun[], setup: Setup): Promise<void> {
  const db: BenchDatabase | undefined =
    setup === 'one node, PostgreSQL' ? await createBenchDatabase(s.postgresUrl!) : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  let node: Node | undefined;
  try {
    node = await startBridge(dir, s.profileDir, db ? { DATABASE_URL: db.url } : {});
    const [a, b] = halves(await provision(node.admin, s.m, 2 * s.n), s.n);
    runs.push(
      await measureRun(s, setup, 'halves', undefined, [node], redis, [
        generator(s, undefined, node, node, a!),
        generator(s, undefined, node, node, b!),
      ]),
    );
  } finally {
    await shutdown(node, dir);
    await db?.drop();
  }
}

/** Until each node counts the others alive: provisioning before that would not be told to them. */
async function untilPeers(nodes: Node[]): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const peers = await Promise.all(nodes.map(async (n) => (await scrape(n)).get('bridge_cluster_peers') ?? 0));
    if (peers.every((p) => p >= nodes.length - 1)) return;
    if (Date.now() > deadline)
      throw new Error(`the nodes did not see each other within 15 s (peers: ${peers.join(', ')})`);
    await sleep(200);
  }
}
