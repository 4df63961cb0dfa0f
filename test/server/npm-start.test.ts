// `npm start` run as a service manager or a terminal runs it: a SIGTERM or SIGINT to npm, or a Ctrl-C to the
// whole process group, shuts the bridge down gracefully and leaves no process behind. npm forwards SIGTERM and
// SIGINT to its child only, so the bridge must be that child (O10).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { alive, startBridgeProcess, stopBridgeProcesses, type BridgeProcess } from '../helpers/process.js';

/** `pid command line`, for a failure message. */
function command(pid: number): string {
  try {
    return `${pid} ${execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).trim()}`;
  } catch {
    return `${pid} (gone)`;
  }
}

/** Whether something accepts TCP connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('npm start as a service (SIGTERM, SIGINT)', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'bridge-npm-start-'));
  });

  afterEach(async function () {
    await stopBridgeProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (processGroup = false) =>
    startBridgeProcess(
      { DATABASE_URL: `sqlite:${join(dir, 'b.sqlite')}`, LOG_LEVEL: 'warn' },
      { npmStart: true, processGroup },
    );

  async function expectGracefulAndNothingLeft(proc: BridgeProcess, signal: string): Promise<void> {
    // Bounded, so a signal that reaches nobody fails here rather than at mocha's timeout.
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([
      proc.exited,
      new Promise<never>(
        (_, reject) =>
          (timer = setTimeout(
            () => reject(new Error(`npm still running 20 s after ${signal}; stderr: ${proc.stderr()}`)),
            20_000,
          )),
      ),
    ]).finally(() => clearTimeout(timer));
    expect(exit, proc.stderr()).to.deep.equal({ code: 0, signal: null });
    expect(proc.stderr()).to.include(`${signal}: shutting down`).and.include('bridge stopped');
    // A helper of the bridge (tsx's esbuild) ends when it sees its parent gone: allow it a moment, polling.
    for (let i = 0; i < 100 && proc.below.some(alive); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(proc.below.filter(alive).map(command), 'processes left').to.deep.equal([]);
    expect(await listening(proc.port), 'port still listening').to.equal(false);
  }

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to the npm process reaches the bridge: graceful shutdown, exit 0, no process left`, async function () {
      const proc = await start();
      expect(proc.below, 'the bridge runs below npm').to.have.length.above(0);
      proc.child.kill(signal);
      await expectGracefulAndNothingLeft(proc, signal);
    });
  }

  it('Ctrl-C in a terminal (SIGINT to npm and the bridge alike, then npm forwards it again) shuts down gracefully once', async function () {
    const proc = await start(true);
    process.kill(-proc.child.pid!, 'SIGINT');
    await expectGracefulAndNothingLeft(proc, 'SIGINT');
  });
});
