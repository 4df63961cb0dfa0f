// One bridge per database: per SQLite file (spec/protocol.md O7), a second bridge on the same file is refused at
// start with a message that names the file and the holder's pid; per PostgreSQL database (O13) likewise, unless the
// database is shared by the nodes of one bridge. Either lock goes with its holder, however it ends.
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import knexFactory from 'knex';
import { pino } from 'pino';
import { startServer, type RunningBridge } from '../../src/server.js';
import { silentLogger } from '../../src/shared/logger.js';
import { claimDatabase, openDatabase } from '../../src/store/database.js';
import { DatabaseInUseError } from '../../src/store/database-errors.js';
import { startTestBridge, testConfig } from '../helpers/bridge.js';
import { describePostgres } from '../helpers/databases.js';
import { capturedLog } from '../helpers/log.js';
import { startBridgeProcess, stopBridgeProcesses } from '../helpers/process.js';

const IN_USE =
  /^the database file (\S+) is in use by another bridge process \(pid (\d+)\); SQLite serves one process — for several nodes use PostgreSQL \+ Redis \(the README's "Several nodes"\)/;

async function refusal(start: Promise<unknown>): Promise<Error> {
  try {
    await start;
  } catch (err) {
    return err as Error;
  }
  throw new Error('the second bridge started');
}

/** The pid in the lock file's header (SQLite's user_version), as another process reads it. */
const lockPid = (file: string) => readFileSync(`${file}.lock`).readInt32BE(60);

describe('one bridge process per SQLite file (O7)', function () {
  let dir: string;
  let file: string;
  const started: RunningBridge[] = [];

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'bridge-lock-'));
    file = join(dir, 'bridge.sqlite');
  });

  afterEach(async function () {
    await Promise.all(started.splice(0).map((b) => b.close()));
    await stopBridgeProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (databaseUrl = `sqlite:${file}`, log?: pino.Logger) => {
    const running = await startServer(testConfig({ databaseUrl }), log ? { log } : {});
    started.push(running);
    return running;
  };

  it('refuses a second bridge on the same file at once, naming the file and the pid, and the first one keeps working', async function () {
    const first = await startTestBridge({ databaseUrl: `sqlite:${file}` });
    const t0 = Date.now();
    const err = await refusal(start());
    expect(Date.now() - t0, 'no busy wait').to.be.below(1000);
    expect(err).to.be.instanceOf(DatabaseInUseError);
    expect(err.message).to.match(IN_USE);
    const [, named, pid] = IN_USE.exec(err.message)!;
    expect(named).to.equal(file);
    expect(Number(pid)).to.equal(process.pid);
    // The refused attempt did not loosen the lock, and the first bridge still reads and writes its database.
    expect((await refusal(start())).message).to.match(IN_USE);
    expect((await first.http('GET', '/readyz', { token: null })).status).to.equal(200);
    expect((await first.http('POST', '/admin/v1/organizations', { body: { name: 'Still Here' } })).status).to.equal(
      201,
    );
  });

  it('starts a new bridge on the file once the first has shut down, with no warning: a clean shutdown leaves no pid behind', async function () {
    const first = await start();
    expect(lockPid(file)).to.equal(process.pid);
    await first.close();
    expect(lockPid(file), 'the pid is cleared by a clean shutdown').to.equal(0);
    const { log, lines } = capturedLog();
    const second = await start(undefined, log);
    expect((await fetch(new URL('/readyz', second.url))).status).to.equal(200);
    expect(lines().filter((l) => l.level >= 40)).to.deep.equal([]);
  });

  it('takes over a lock file left by a process that no longer exists, with a warning that names its pid', async function () {
    // What a bridge killed with SIGKILL leaves: its pid in the header of a lock file nobody holds any more.
    const gone = 999_999_999; // above any pid_max
    const db = knexFactory({ client: 'sqlite3', connection: { filename: `${file}.lock` }, useNullAsDefault: true });
    await db.raw(`PRAGMA user_version = ${gone}`);
    await db.destroy();
    expect(lockPid(file)).to.equal(gone);

    const { log, lines } = capturedLog();
    await start(undefined, log);
    expect(lockPid(file)).to.equal(process.pid);
    const warning = lines().find((l) => l.level === 40);
    expect(warning).to.include({
      pid: gone,
      lock: `${file}.lock`,
      msg: 'database lock taken over from a bridge process that ended without a clean shutdown',
    });
  });

  it('sees one file through a relative path and through a symlinked folder', async function () {
    await start();
    expect((await refusal(start(`sqlite:${relative(process.cwd(), file)}`))).message).to.match(IN_USE);
    const link = join(dir, 'link');
    symlinkSync(dir, link);
    expect((await refusal(start(`sqlite:${join(link, 'bridge.sqlite')}`))).message).to.match(IN_USE);
  });

  it('refuses a database file that has another name (a hard link), which a second bridge could lock and write apart, whichever name it is started on', async function () {
    const first = await start();
    await first.close();
    const other = join(dir, 'other.sqlite');
    linkSync(file, other);
    for (const name of [file, other]) {
      const err = await refusal(start(`sqlite:${name}`));
      expect(err).to.be.instanceOf(DatabaseInUseError);
      expect(err.message).to.equal(
        `the database file ${name} has 2 names (hard links): a bridge started on another of them would lock that name and keep a WAL of its own, ` +
          `and the two would diverge. Give the file one name (remove the other links: find / -xdev -samefile ${name}), or copy it.`,
      );
    }
    rmSync(other);
    await start(); // one name again
  });

  it('refuses a second bridge on a hard link made while the first runs', async function () {
    await start();
    linkSync(file, join(dir, 'other.sqlite'));
    expect((await refusal(start(`sqlite:${join(dir, 'other.sqlite')}`))).message).to.include(
      'has 2 names (hard links)',
    );
  });

  it('needs no lock for sqlite::memory: (each process has its own database), and none for another file', async function () {
    await start('sqlite::memory:');
    await start('sqlite::memory:');
    mkdirSync(join(dir, 'other'));
    await start(`sqlite:${file}`);
    await start(`sqlite:${join(dir, 'other', 'bridge.sqlite')}`);
  });

  it('lets go of the lock when the start fails after taking it (here: the port is taken)', async function () {
    const holder = await start('sqlite::memory:');
    const err = await refusal(startServer(testConfig({ databaseUrl: `sqlite:${file}`, port: holder.port })));
    expect((err as NodeJS.ErrnoException).code).to.equal('EADDRINUSE');
    await start(); // the file is free again
  });

  it('says what is wrong with a lock file that is not one', async function () {
    writeFileSync(`${file}.lock`, 'not a database, but something an operator put here '.repeat(100));
    const err = await refusal(start());
    expect(err).to.be.instanceOf(DatabaseInUseError);
    expect(err.message)
      .to.include(`cannot lock the database file ${file} through ${file}.lock`)
      .and.include(`remove ${file}.lock`);
  });

  describe('as real processes (`bridge serve`)', function () {
    this.timeout(60_000);

    it('refuses the second process on the file (exit 1, the message on stderr); after the first is killed (SIGKILL) a third takes over and says so', async function () {
      const env = { DATABASE_URL: `sqlite:${file}`, LOG_LEVEL: 'info' };
      const first = await startBridgeProcess(env);
      const err = await refusal(startBridgeProcess(env));
      expect(err.message).to.include('bridge serve exited (code 1, signal null)');
      expect(err.message).to.include(
        `bridge: the database file ${file} is in use by another bridge process (pid ${first.child.pid})`,
      );
      expect(err.message).to.include(
        'SQLite serves one process — for several nodes use PostgreSQL + Redis (the README\'s "Several nodes")',
      );

      first.child.kill('SIGKILL');
      await first.exited;
      const third = await startBridgeProcess(env);
      const takeover = third
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((l) => l.level === 40);
      expect(takeover).to.include({
        pid: first.child.pid,
        msg: 'database lock taken over from a bridge process that ended without a clean shutdown',
      });

      third.child.kill('SIGTERM');
      expect(await third.exited, third.stderr()).to.deep.equal({ code: 0, signal: null });
      expect(lockPid(file), 'a clean shutdown clears the pid').to.equal(0);
    });
  });
});

describePostgres('one bridge per PostgreSQL database (O13)', function (db) {
  const started: RunningBridge[] = [];
  const PASSWORD = 'hunter2-not-for-logs';
  /** The test database's URL with a password in it (the test server trusts local connections, so any will do). */
  const withPassword = () => Object.assign(new URL(db.url()), { password: PASSWORD }).toString();
  const shown = () => Object.assign(new URL(db.url()), { password: '***' }).toString();
  const inUse = (holderPid: number) =>
    new RegExp(
      `^another bridge is using the database ${escape(shown())} \\(bridge pid ${holderPid} on [^,]+, connected from 127\\.0\\.0\\.1 since \\S+\\); ` +
        'run one bridge per database, or set REDIS_URL to run several nodes as one bridge$',
    );
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  afterEach(async function () {
    await Promise.all(started.splice(0).map((b) => b.close()));
    await stopBridgeProcesses();
  });

  const start = async (options: { port?: number } = {}) => {
    const running = await startServer(testConfig({ databaseUrl: withPassword(), ...options }));
    started.push(running);
    return running;
  };

  it('refuses a second bridge on the database at once, naming it (never its password) and the bridge holding it; the first one keeps working', async function () {
    const first = await startTestBridge({ databaseUrl: withPassword() });
    const t0 = Date.now();
    const err = await refusal(start());
    expect(Date.now() - t0, 'no wait').to.be.below(1000);
    expect(err).to.be.instanceOf(DatabaseInUseError);
    expect(err.message).to.match(inUse(process.pid)).and.not.include(PASSWORD);
    expect((await refusal(start())).message, 'the refused attempt did not loosen the lock').to.match(
      inUse(process.pid),
    );
    expect((await first.http('GET', '/readyz', { token: null })).status).to.equal(200);
    expect((await first.http('POST', '/admin/v1/organizations', { body: { name: 'Still Here' } })).status).to.equal(
      201,
    );
  });

  it('takes no lock for the nodes of a database shared by a cluster (shared: true), while a lone bridge holds it', async function () {
    await start();
    expect(await claimDatabase(withPassword(), silentLogger, { shared: true })).to.equal(undefined);
    const knex = await openDatabase(withPassword()); // the shared node opens and uses the database as usual
    try {
      expect(await knex('organizations').select()).to.deep.equal([]);
    } finally {
      await knex.destroy();
    }
    expect((await refusal(claimDatabase(withPassword(), silentLogger))).message).to.match(inUse(process.pid));
  });

  it('lets go of the lock at shutdown, and when the start fails after taking it (here: the port is taken)', async function () {
    const first = await start();
    await first.close();
    started.splice(0);
    const holder = await startTestBridge(); // on sqlite::memory:, only to hold a port
    const err = await refusal(start({ port: holder.port }));
    expect((err as NodeJS.ErrnoException).code).to.equal('EADDRINUSE');
    await start(); // the database is free again
  });

  describe('as real processes (`bridge serve`)', function () {
    this.timeout(60_000);

    it('refuses the second process (exit 1, one line on stderr, no password); once the first is killed (SIGKILL) a third starts', async function () {
      const env = { DATABASE_URL: withPassword(), LOG_LEVEL: 'info' };
      const first = await startBridgeProcess(env);
      const err = await refusal(startBridgeProcess(env));
      expect(err.message).to.include('bridge serve exited (code 1, signal null)');
      const stderr = err.message
        .slice(err.message.indexOf('stderr: ') + 'stderr: '.length, err.message.lastIndexOf('\nstdout:'))
        .trim();
      expect(stderr.split('\n'), 'one line').to.have.length(1);
      expect(stderr.slice('bridge: '.length)).to.match(inUse(first.child.pid!));

      first.child.kill('SIGKILL'); // its session ends with its socket: PostgreSQL drops the lock
      await first.exited;
      const third = await startBridgeProcess(env);
      const listening = third
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === 'bridge listening');
      expect(listening.database).to.equal(shown());
      third.child.kill('SIGTERM');
      expect(await third.exited, third.stderr()).to.deep.equal({ code: 0, signal: null });
      for (const output of [first.stdout(), first.stderr(), err.message, third.stdout(), third.stderr()])
        expect(output).not.to.include(PASSWORD);
    });
  });
});
