// A private redis-server for a test that must kill or restart it, or must not share Redis's pub/sub channels (they
// ignore database numbers) with another test's nodes.
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './process.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it gives a value. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  ms = 15_000,
): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) {
    const value = await probe();
    if (value !== undefined) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A private redis-server on a port of its own, killable and restartable on the same port. */
export class TestRedis {
  private child: ChildProcess | undefined;
  constructor(readonly port: number) {}
  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    this.child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await until('redis to answer', async () => {
      const probe = new Redis(this.url, { lazyConnect: true, retryStrategy: () => null, enableOfflineQueue: false });
      probe.on('error', () => {}); // refused until it listens: the rejection below says so
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG' ? true : undefined;
      } catch {
        return undefined;
      } finally {
        probe.disconnect();
      }
    });
  }
  kill(): void {
    this.child?.kill('SIGKILL');
  }
}

/** A started TestRedis on a free port. */
export async function startTestRedis(): Promise<TestRedis> {
  const redis = new TestRedis(await freePort());
  await redis.start();
  return redis;
}
