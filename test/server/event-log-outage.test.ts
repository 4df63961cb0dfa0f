// The event log while the database does not take writes (O15): the rows wait in memory, merged with what comes
// meanwhile, and are written when it is back; the rows waiting are bounded, the oldest finished ones dropped over
// the bound; rows the database refuses are dropped alone and not retried; every dropped row is counted and logged;
// the bridge relays all the while, and /readyz says the database is away. PostgreSQL is made unreachable through a
// TCP proxy the test cuts or stalls (the server itself keeps running for the other tests); SQLite by a lock.
import { expect } from 'chai';
import type { Knex } from 'knex';
import { LOG_WINDOW_MS } from '../../src/core/burst-log.js';
import { connectDatabase } from '../../src/store/database.js';
import { WriteBehind, type EventRow, type SessionRow } from '../../src/store/write-behind.js';
import { startTestBridge, stopAll, type TestBridge } from '../helpers/bridge.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { READY_EVENT_LOG_MS } from '../../src/server.js';
import { endOutages, fillDisk, writerWithOutage } from '../helpers/database-outage.js';
import { describeEachDatabase, describePostgres, describeSqlite } from '../helpers/databases.js';
import { exchange, startEvent } from '../helpers/events.js';
import { eventually } from '../helpers/eventually.js';
import { capturedLog } from '../helpers/log.js';
import { scrape, sample } from '../helpers/metrics.js';
import { closeTcpProxies, startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const AT = Date.parse('2026-11-22T12:00:00.000Z');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Retries every 10-40 ms: a test's outage of a few hundred ms spans several. */
const FAST_RETRIES = { first: 10, max: 40 };

const pending = (id: string, extra: Partial<EventRow> = {}): EventRow => ({
  event_id: id,
  app_id: 'app-a',
  agent_id: 'agent-a',
  thread_id: 't',
  session_key: null,
  status: 'delivered',
  outcome: 'pending',
  code: null,
  payload_bytes: 2,
  tokens_used: null,
  received_at: AT,
  completed_at: null,
  latency_ms: null,
  ...extra,
});
const replied = { outcome: 'replied', code: null, tokens_used: 3, completed_at: AT + 40, latency_ms: 40 } as const;
const session = (key: string, createdAt = AT): SessionRow => ({
  session_key: key,
  agent_id: 'agent-a',
  app_id: 'app-a',
  thread_id: key,
  created_at: createdAt,
  expires_at: createdAt + 86_400_000,
});

const messages = (lines: () => any[]) => lines().map((l) => l.msg as string);

async function stored(knex: Knex): Promise<{ events: Record<string, string>; sessions: Record<string, number> }> {
  const events = await knex('events').select('event_id', 'outcome');
  const sessions = await knex('sessions').select('session_key', 'created_at');
  return {
    events: Object.fromEntries(events.map((e) => [e.event_id, e.outcome])),
    sessions: Object.fromEntries(sessions.map((s) => [s.session_key, Number(s.created_at)])),
  };
}

describeEachDatabase('the event log while the database does not take writes (O15)', function (db) {
  afterEach(endOutages);

  it('keeps every change until the database is back and then writes, by itself, the newest of each: no row lost, no old version over a new one', async function () {
    const outage = await writerWithOutage(db);
    const { log, lines } = capturedLog('debug');
    const writer = new WriteBehind(outage.knex, log, { flushMs: 5, maxRows: 1_000, retryMs: FAST_RETRIES });
    writer.insertEvent(pending('e1'));
    writer.upsertSession(session('s1'));
    writer.upsertSession(session('s2'));
    await writer.flush();

    await outage.begin();
    writer.updateEvent('e1', replied);
    writer.insertEvent(pending('e2'));
    writer.updateEvent('e2', { outcome: 'agent_error', code: 'AGENT_ERROR', completed_at: AT + 5, latency_ms: 5 });
    writer.insertEvent(pending('e3'));
    writer.deleteSessions(['s1', 's2']);
    writer.upsertSession(session('s2', AT + 1)); // a new session under the same key after its deletion
    writer.upsertSession(session('s3'));
    writer.deleteSessions(['s3']);
    await writer.flush();
    expect(writer.pending, 'e1, e2, e3, s1, s2, s3 wait').to.equal(6);
    await eventually(
      'failed retries',
      () => messages(lines).filter((m) => m.includes('failed again')).length,
      (n) => n >= 3,
    );
    writer.updateEvent('e3', replied); // while retries fail
    expect(writer.pending).to.equal(6);

    await outage.end();
    await eventually(
      'rows waiting once the database is back',
      () => writer.pending,
      (n) => n === 0,
    );
    expect(await stored(await db.open())).to.deep.equal({
      events: { e1: 'replied', e2: 'agent_error', e3: 'replied' },
      sessions: { s2: AT + 1 },
    });
    expect(writer.dropped).to.deep.equal({ queue_full: 0, refused: 0, shutdown: 0 });
    const errors = lines().filter((l) => l.level >= 50);
    expect(
      errors.map((l) => l.msg),
      'one error line for the outage, not one per retry',
    ).to.deep.equal([
      'event log: the database did not take a group commit; its rows wait in memory (at most EVENT_LOG_QUEUE_MAX_ROWS) and it is retried',
    ]);
    expect(errors[0]).to.include({ waiting: 6, failed_commits: 1, retry_in_ms: FAST_RETRIES.first, failing_for_ms: 0 });
    expect(errors[0].err.message, 'the failure, without the statement and its values').to.have.length.below(200);
    expect(messages(lines)).to.include('event log: the database takes group commits again');
    await writer.close();
  });

  it('writes a backlog a bounded batch at a time (EVENT_LOG_COMMIT_MAX_ROWS), the oldest first, once the database is back', async function () {
    const outage = await writerWithOutage(db);
    const { log } = capturedLog();
    const commits: number[] = [];
    const writer = new WriteBehind(outage.knex, log, {
      flushMs: 5,
      maxRows: 1_000,
      commitMaxRows: 100,
      retryMs: FAST_RETRIES,
      onCommit: (rows) => commits.push(rows),
    });
    await outage.begin();
    for (let i = 0; i < 450; i++) writer.insertEvent({ ...pending(`01KEV${String(i).padStart(4, '0')}`), ...replied });
    writer.upsertSession(session('s1'));
    await writer.flush();
    expect(writer.pending).to.equal(451);
    expect(writer.failing, 'failing, with the reason')
      .to.include({ waiting: 451 })
      .and.have.property('reason')
      .that.is.a('string').and.not.empty;

    await outage.end();
    await eventually(
      'rows waiting once the database is back',
      () => writer.pending,
      (n) => n === 0,
    );
    expect(commits, 'four full batches, then the rest with the session').to.deep.equal([100, 100, 100, 100, 51]);
    expect(writer.failing).to.equal(undefined);
    const logged = await stored(await db.open());
    expect(Object.keys(logged.events)).to.have.length(450);
    expect(logged.sessions).to.have.property('s1');
    await writer.close();
  });

  it('drops, counts and logs at shutdown the rows the database has not taken, and any change after it', async function () {
    const outage = await writerWithOutage(db);
    const { log, lines } = capturedLog();
    const writer = new WriteBehind(outage.knex, log, { flushMs: 5, maxRows: 1_000, retryMs: FAST_RETRIES });
    await outage.begin();
    writer.insertEvent(pending('e1'));
    writer.insertEvent(pending('e2'));
    writer.updateEvent('e2', replied);
    writer.upsertSession(session('s1'));
    await writer.close();
    expect(writer.dropped).to.deep.equal({ queue_full: 0, refused: 0, shutdown: 3 });
    expect(writer.pending).to.equal(0);
    writer.updateEvent('e1', replied);
    expect(writer.dropped.shutdown).to.equal(4);
    expect(messages(lines).filter((m) => m.startsWith('event log rows dropped'))).to.deep.equal([
      'event log rows dropped: 3 (3 because the bridge stopped before the database took them)',
      'event log rows dropped: 1 (1 because the bridge stopped before the database took them)',
    ]);
    await outage.end();
  });

  it('drops alone the row the database refuses, counts and logs it, and retries nothing: a poison row neither loops nor takes good rows with it', async function () {
    const knex = await db.open({ migrate: true });
    let failedStatements = 0;
    knex.on('query-error', () => failedStatements++);
    const { log, lines } = capturedLog();
    const writer = new WriteBehind(knex, log, { flushMs: 1_000, maxRows: 10_000 });
    const count = 6_000; // three statements: the bad row in the second
    const id = (i: number) => `01KEV${String(i).padStart(6, '0')}`;
    for (let i = 0; i < count; i++)
      writer.insertEvent(pending(id(i), i === 3_210 ? { app_id: null as never } : { payload_bytes: i }));
    await writer.flush();

    expect(writer.pending).to.equal(0);
    expect(writer.dropped).to.deep.equal({ queue_full: 0, refused: 1, shutdown: 0 });
    const rows = await knex('events').select('event_id');
    expect(rows).to.have.length(count - 1);
    expect(rows.map((r) => r.event_id)).not.to.include(id(3_210));
    const dropped = lines().filter((l) => l.msg.startsWith('event log rows dropped'));
    expect(dropped.map((l) => l.msg)).to.deep.equal([
      'event log rows dropped: 1 (1 because the database refused them)',
    ]);
    expect(dropped[0].err.message, 'why, in a line of its own size')
      .to.match(/app_id/)
      .and.have.length.below(200);
    expect(
      messages(lines).filter((m) => m.includes('did not take')),
      'not taken for a retry',
    ).to.deep.equal([]);

    const failed = failedStatements;
    await sleep(300); // past the first retries, were there any
    expect(failedStatements, 'no retry after the flush').to.equal(failed);
    writer.insertEvent(pending('01KEVAFTER'));
    await writer.close();
    expect(await knex('events').where({ event_id: '01KEVAFTER' }).select('outcome')).to.deep.equal([
      { outcome: 'pending' },
    ]);
  });

  it('gives up on a batch every row of which the database refuses after a bounded number of commits, dropping and counting all of it', async function () {
    const knex = await db.open({ migrate: true });
    let failedStatements = 0;
    knex.on('query-error', () => failedStatements++);
    const { log } = capturedLog();
    const writer = new WriteBehind(knex, log, { flushMs: 1_000, maxRows: 10_000 });
    for (let i = 0; i < 3_000; i++) writer.insertEvent(pending(`01KBAD${i}`, { app_id: null as never }));
    await writer.flush();
    expect(writer.pending).to.equal(0);
    expect(writer.dropped.refused).to.equal(3_000);
    expect(failedStatements, 'far fewer than one per row').to.be.below(300);
    await writer.close();
  });
});

describeSqlite('the event log on a full disk (O15)', function (db) {
  const id = (i: number) => `01KEV${String(i).padStart(6, '0')}`;

  it('takes of a backlog what the disk has room for, the oldest rows first, and the rest once room is made: not one transaction of everything, which a disk with room for part of it never takes', async function () {
    const knex = await db.open({ migrate: true });
    const disk = await fillDisk(knex);
    const { log } = capturedLog();
    const rows = async () =>
      (await knex('events').select('event_id').orderBy('event_id')).map((r) => r.event_id as string);

    // As before: every row waiting in one commit. Room for about half of them is room for none.
    const allAtOnce = new WriteBehind(knex, log, {
      flushMs: 5,
      maxRows: 10_000,
      commitMaxRows: 10_000,
      retryMs: FAST_RETRIES,
    });
    for (let i = 0; i < 2_000; i++) allAtOnce.insertEvent({ ...pending(`01KOLD${i}`), ...replied });
    await allAtOnce.flush();
    await disk.room(40); // ~900 of the 2,000 rows
    await sleep(300); // several retries
    expect(await rows(), 'nothing written').to.deep.equal([]);
    await allAtOnce.close();

    const clock = new AdjustableClock({ frozen: true, start: AT });
    const writer = new WriteBehind(knex, log, {
      flushMs: 5,
      maxRows: 10_000,
      commitMaxRows: 200,
      retryMs: FAST_RETRIES,
      clock,
    });
    await disk.room(0);
    for (let i = 0; i < 2_000; i++) writer.insertEvent({ ...pending(id(i)), ...replied });
    await writer.flush();
    expect(writer.failing).to.deep.equal({ forMs: 0, reason: 'SQLITE_FULL: database or disk is full', waiting: 2_000 });
    clock.advance(7_000);
    await disk.room(40);
    await eventually('the batches the disk has room for', rows, (r) => r.length >= 600);
    await sleep(200); // retries fail meanwhile: the disk is full again
    const written = await rows();
    expect(written.length % 200, 'whole batches').to.equal(0);
    expect(written.length).to.be.below(2_000);
    expect(written, 'the oldest rows').to.deep.equal(Array.from({ length: written.length }, (_, i) => id(i)));
    expect(writer.pending).to.equal(2_000 - written.length);
    expect(writer.failing, 'still one outage: it began before the room was made').to.include({
      forMs: 7_000,
      waiting: 2_000 - written.length,
    });

    await disk.free();
    await eventually(
      'rows waiting once room is made',
      () => writer.pending,
      (n) => n === 0,
    );
    expect(await rows()).to.deep.equal(Array.from({ length: 2_000 }, (_, i) => id(i)));
    expect(writer.failing).to.equal(undefined);
    expect(writer.dropped).to.deep.equal({ queue_full: 0, refused: 0, shutdown: 0 });
    await writer.close();
  });

  it(`/readyz answers 500 INTERNAL_ERROR with the reason once the event log's commits have failed for ${READY_EVENT_LOG_MS / 1000} s while the database answers, and 200 once they are written`, async function () {
    const captured = capturedLog();
    const bridge = await startTestBridge(
      { databaseUrl: db.url() },
      { log: captured.log, eventLogRetryMs: FAST_RETRIES },
    );
    const { agent, appClient, agentClient } = await bridge.pair();
    await bridge.writer.flush();
    // The bridge's own connection (a pool of one): max_page_count is a setting of the connection.
    const disk = await fillDisk((bridge.writer as unknown as { db: Knex }).db);
    const readyz = () => bridge.http('GET', '/readyz', { token: null });

    // Rows that need new pages (a few would fit in the free space of the pages the file has).
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      const { event_id } = await startEvent(appClient, agentClient, agent.agent_id, `${'t'.repeat(110)}-${i}`);
      agentClient.send({ type: 'reply', event_id, content: 'ok', done: true });
      await appClient.expect('reply');
      ids.push(event_id);
    }
    await eventually('a failed commit', () => bridge.writer.failing, Boolean);
    expect((await readyz()).status, 'the database answers: a commit that failed is not news yet').to.equal(200);
    expect(sample(await scrape(bridge.url), 'bridge_event_log_failing_seconds')).to.equal(0);

    bridge.clock.advance(READY_EVENT_LOG_MS - 1);
    expect((await readyz()).status).to.equal(200);
    bridge.clock.advance(1);
    const res = await readyz();
    expect(res.status).to.equal(500);
    expect(res.body).to.deep.equal({
      code: 'INTERNAL_ERROR',
      error: `The event log has not been written for ${READY_EVENT_LOG_MS / 1000} s: the database does not take its commits (SQLITE_FULL: database or disk is full); ${bridge.writer.pending} rows wait in memory.`,
    });
    expect(sample(await scrape(bridge.url), 'bridge_event_log_failing_seconds')).to.equal(READY_EVENT_LOG_MS / 1000);

    await disk.free();
    await eventually(
      'rows waiting once room is made',
      () => bridge.writer.pending,
      (n) => n === 0,
    );
    expect((await readyz()).status).to.equal(200);
    expect(sample(await scrape(bridge.url), 'bridge_event_log_failing_seconds')).to.equal(0);
    const logged = await (await db.open())('events').whereIn('event_id', ids).select('outcome');
    expect(logged.map((r) => r.outcome)).to.deep.equal(ids.map(() => 'replied'));
  });
});

describePostgres('the bridge while PostgreSQL is unreachable (O15)', function (db) {
  let proxy: TcpProxy;
  afterEach(async function () {
    // The bridge first: a connection it opened through the proxy as the proxy closed could leave a server process
    // in its start-up, which the database's removal cannot end.
    await stopAll();
    await closeTcpProxies();
  });

  async function start(overrides: Parameters<typeof startTestBridge>[0] = {}, retryMs = FAST_RETRIES) {
    proxy = await startTcpProxy(db.url());
    const captured = capturedLog();
    const bridge = await startTestBridge(
      { databaseUrl: proxy.url, ...overrides },
      { log: captured.log, eventLogRetryMs: retryMs },
    );
    return { bridge, lines: captured.lines };
  }

  const outcomes = async (): Promise<Record<string, string>> =>
    Object.fromEntries(
      (await (await db.open())('events').select('event_id', 'outcome')).map((e) => [e.event_id, e.outcome]),
    );

  const metric = async (bridge: TestBridge, name: string, labels: Record<string, string> = {}) =>
    sample(await scrape(bridge.url), name, labels);

  it('relays every event while the database is cut off, and once it is back writes every row with its outcome: none lost', async function () {
    const { bridge, lines } = await start();
    const { agent, appClient, agentClient } = await bridge.pair();
    const before = [(await exchange(appClient, agentClient, agent.agent_id)).event_id];
    await bridge.writer.flush();

    await proxy.cut();
    const during: string[] = [];
    for (let i = 0; i < 30; i++) during.push((await exchange(appClient, agentClient, agent.agent_id)).event_id);
    // One in flight across the end of the outage: accepted while it lasts, answered once it is over.
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    const across = (await appClient.expect('accepted')).event_id;
    await agentClient.expect('event');
    await eventually(
      'failed commits',
      () => messages(lines).filter((m) => m.includes('did not take')).length,
      (n) => n > 0,
    );
    await sleep(200); // several retries fail
    expect(bridge.writer.pending, 'rows waiting').to.equal(31);
    expect(await metric(bridge, 'bridge_event_log_pending_rows')).to.equal(31);
    expect((await bridge.http('GET', '/readyz', { token: null })).status).to.equal(500);

    await proxy.restore();
    agentClient.send({ type: 'reply', event_id: across, content: 'ok', done: true });
    await appClient.expect('reply');
    await eventually(
      'rows waiting once the database is back',
      () => bridge.writer.pending,
      (n) => n === 0,
    );
    const all = [...before, ...during, across];
    expect(await outcomes()).to.deep.equal(Object.fromEntries(all.map((id) => [id, 'replied'])));
    for (const reason of ['queue_full', 'refused', 'shutdown'])
      expect(await metric(bridge, 'bridge_event_log_rows_dropped_total', { reason }), reason).to.equal(0);
    expect(messages(lines)).to.include('event log: the database takes group commits again');
    expect((await bridge.http('GET', '/readyz', { token: null })).status).to.equal(200);
  });

  it('over EVENT_LOG_QUEUE_MAX_ROWS drops the oldest finished rows, keeps the rows of events in flight, counts and logs the drops, and relays meanwhile', async function () {
    const MAX = 20;
    // No retry on its own during the test (flush() tries): the counts are read between commits.
    const { bridge, lines } = await start({ eventLogQueueMaxRows: MAX }, { first: 60_000, max: 60_000 });
    const { agent, appClient, agentClient } = await bridge.pair();
    await exchange(appClient, agentClient, agent.agent_id); // the session's row is written before the outage
    await bridge.writer.flush();

    await proxy.cut();
    // The oldest row waiting is that of an event still in flight: it stays while 50 newer finished rows come.
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
    const held = (await appClient.expect('accepted')).event_id;
    await agentClient.expect('event');
    const replied: string[] = [];
    for (let i = 0; i < 50; i++) replied.push((await exchange(appClient, agentClient, agent.agent_id)).event_id);
    agentClient.send({ type: 'reply', event_id: held, content: 'late', done: true });
    expect((await appClient.expect('reply')).event_id).to.equal(held);

    // 51 rows came for 20 places: 31 finished rows dropped, never the one of the event in flight.
    expect(bridge.writer.pending).to.equal(MAX);
    expect(await metric(bridge, 'bridge_event_log_pending_rows')).to.equal(MAX);
    expect(await metric(bridge, 'bridge_event_log_rows_dropped_total', { reason: 'queue_full' })).to.equal(31);
    const dropLines = () => lines().filter((l) => l.msg.startsWith('event log rows dropped'));
    expect(
      dropLines().map((l) => l.msg),
      'the first drop at once',
    ).to.deep.equal([
      `event log rows dropped: 1 (1 because more than EVENT_LOG_QUEUE_MAX_ROWS=${MAX} rows waited for the database)`,
    ]);
    bridge.clock.advance(LOG_WINDOW_MS);
    expect(
      dropLines().map((l) => [l.rows, l.reasons]),
      'the rest a window later',
    ).to.deep.equal([
      [1, { queue_full: 1 }],
      [30, { queue_full: 30 }],
    ]);

    await proxy.restore();
    await bridge.writer.flush();
    expect(bridge.writer.pending).to.equal(0);
    const logged = await outcomes();
    expect(Object.keys(logged)).to.have.length(1 + MAX);
    for (const id of replied.slice(0, 31)) expect(logged, `${id}, among the oldest`).not.to.have.property(id);
    for (const id of [...replied.slice(31), held]) expect(logged, id).to.have.property(id, 'replied');
  });

  it('while a commit hangs on a network that swallows every packet, the rows over the bound are still the oldest: those of that commit, counted when it fails', async function () {
    await db.open({ migrate: true });
    proxy = await startTcpProxy(db.url());
    const knex = connectDatabase(proxy.url);
    const { log, lines } = capturedLog();
    const writer = new WriteBehind(knex, log, { flushMs: 1, maxRows: 10, retryMs: FAST_RETRIES });
    try {
      const id = (i: number) => `01KEV${String(i).padStart(3, '0')}`;
      writer.insertEvent({ ...pending('01KEVFIRST'), ...replied });
      await writer.flush(); // the pool holds a connection, which the network then swallows the commit on
      proxy.stall();
      for (let i = 0; i < 10; i++) writer.insertEvent({ ...pending(id(i)), ...replied });
      void writer.flush(); // takes the ten rows at once, and hangs
      await sleep(0);
      for (let i = 10; i < 15; i++) writer.insertEvent({ ...pending(id(i)), ...replied });
      expect(writer.pending, 'rows waiting').to.equal(10);
      expect(writer.dropped.queue_full, 'not lost yet: the hung commit may still write them').to.equal(0);

      await proxy.restore(); // the hung connection is reset: the commit fails
      await eventually(
        'rows waiting',
        () => writer.pending,
        (n) => n === 0,
      );
      expect(writer.dropped.queue_full).to.equal(5);
      const rows = await (await db.open())('events').select('event_id');
      expect(rows.map((r) => r.event_id)).to.have.members([
        '01KEVFIRST',
        ...Array.from({ length: 10 }, (_, i) => id(i + 5)),
      ]);
      expect(messages(lines)).to.include(
        `event log rows dropped: 5 (5 because more than EVENT_LOG_QUEUE_MAX_ROWS=10 rows waited for the database)`,
      );
    } finally {
      await proxy.restore(); // a commit still hung would keep the pool from closing
      await writer.close();
      await knex.destroy();
    }
  });

  for (const [how, away] of [
    ['cut off (connections reset, new ones refused)', (p: TcpProxy) => p.cut()],
    ['behind a network that swallows every packet', (p: TcpProxy) => p.stall()],
  ] as const) {
    it(`/readyz answers 500 INTERNAL_ERROR within 2 s while the database is ${how}, and 200 once it is back`, async function () {
      const { bridge } = await start();
      expect((await bridge.http('GET', '/readyz', { token: null })).status).to.equal(200);
      await away(proxy);
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        const res = await bridge.http('GET', '/readyz', { token: null });
        const ms = performance.now() - started;
        expect(res.status).to.equal(500);
        expect(res.body).to.include({ code: 'INTERNAL_ERROR', error: 'The database does not answer.' });
        expect(ms, 'answered within').to.be.below(2_000);
      }
      await proxy.restore();
      await eventually(
        '/readyz once the database is back',
        async () => (await bridge.http('GET', '/readyz', { token: null })).status,
        (s) => s === 200,
      );
    });
  }
});
