// The cluster scenario's Socket.IO peer (issue 32): what users who would build this on Socket.IO across several
// nodes would run, two bench/socketio-relay.ts nodes over @socket.io/redis-adapter on the bridge's Redis, under the
// same placements and load as the bridge's hop (./cluster.ts): apps and agents on one node, then apps on one node
// and agents on the other; closed loop, then open loop at --cluster-rate.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { startSocketIoRelay, stop, type Server } from '../processes.js';
import { cpuOnly } from './cluster-counters.js';
import { generator, measureRun } from './cluster-run.js';
import type { ClusterRun } from './cluster-figures.js';
import type { Settings } from './settings.js';

export const SOCKETIO = 'socket.io, two nodes';

/**
 * Appends the runs to `runs`; a failure ends them and is returned (the bridge's runs, done before, still count).
 * The adapter uses pub/sub alone and keeps no keys; pub/sub channels are not per database number, so the relays'
 * channels get a prefix of this run's own (as the bridge's nodes get ids of their own), and another Socket.IO
 * server on the same Redis neither hears them nor counts as one of their nodes.
 */
export async function socketIoTwoNodes(s: Settings, redis: Redis, runs: ClusterRun[]): Promise<string | null> {
  console.error('  the Socket.IO peer: two relays over @socket.io/redis-adapter');
  const key = `bench${randomBytes(4).toString('hex')}`;
  const relays: Server[] = [];
  try {
    for (let i = 0; i < 2; i++) relays.push(await startSocketIoRelay({ url: s.redisUrl!, key }));
    const [r1, r2] = relays as [Server, Server];
    const counts = { m: s.m, n: s.n };
    for (const rate of [undefined, s.clusterRate]) {
      for (const [placement, agentNode] of [
        ['same', r1],
        ['cross', r2],
      ] as const) {
        const config = generator(s, rate, r1, agentNode, counts, 'socketio');
        runs.push(await measureRun(s, SOCKETIO, placement, rate, relays, redis, [config], cpuOnly));
      }
    }
    return null;
  } catch (err) {
    const why = (err as Error).message;
    console.error(`  the Socket.IO peer could not run: ${why}`);
    return why.split('\n')[0]!;
  } finally {
    for (const relay of relays) {
      await stop(relay.child);
      if (relay.child.exitCode !== 0) console.error(relay.logs());
    }
  }
}
