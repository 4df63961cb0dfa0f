// A crash under load (SIGKILL of `node bin/bridge.js serve` on an SQLite file or PostgreSQL): the database stays intact, the
// event log loses at most the events of the last commit window (EVENT_LOG_FLUSH_MS plus the commit itself, O2), and
// the rows whose outcome the crash lost are marked `lost` once no event can still be in flight (O9), not left
// `pending`. Under this moderate load; bench/crash-loss.ts measures the window near the bridge's capacity.
import { performance } from 'node:perf_hooks';
import { expect } from 'chai';
import { LIMITS } from '../../generated/index.js';
import WebSocket from 'ws';
import { describeEachDatabase } from '../helpers/databases.js';
import { allEvents, provisionPair, startBridgeProcess, stopBridgeProcesses } from '../helpers/process.js';

const ADMIN_TOKEN = 'crash-test-admin-token-0123456789';
const FLUSH_MS = 20;
/** The documented commit window the test holds the bridge to: EVENT_LOG_FLUSH_MS plus the commit itself. */
const WINDOW_MS = 100;
const LOAD_MS = 2_000;
/** Events the app keeps in flight: a steady load (a few thousand events/s here) that does not saturate the bridge. */
const IN_FLIGHT = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function open(url: string, token: string): Promise<WebSocket> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  ws.on('error', () => {}); // the kill resets the connection; that is expected
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

describeEachDatabase('a crash under load (SIGKILL)', function (db) {
  this.timeout(120_000);
  const sockets: WebSocket[] = [];

  afterEach(async function () {
    for (const ws of sockets.splice(0)) ws.terminate();
    await stopBridgeProcesses();
  });

  it(`keeps the database intact and every event accepted more than ${WINDOW_MS} ms before the kill, and leaves no row pending for good`, async function () {
    const env = {
      DATABASE_URL: db.url(),
      ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
      RATE_LIMIT_EVENTS_PER_SECOND: '0',
      EVENT_LOG_FLUSH_MS: String(FLUSH_MS),
    };
    const proc = await startBridgeProcess(env);
    const { app, agent } = await provisionPair(proc);
    const wsBase = proc.url.replace(/^http/, 'ws');

    // The agent answers every event at once: one token, then the reply.
    const agentWs = await open(`${wsBase}/v1/ws/agent`, agent.token);
    sockets.push(agentWs);
    agentWs.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.type !== 'event') return;
      agentWs.send(JSON.stringify({ type: 'token', event_id: m.event_id, token: 'ok' }));
      agentWs.send(JSON.stringify({ type: 'reply', event_id: m.event_id, content: '', done: true }));
    });

    // The app keeps IN_FLIGHT events in flight: each reply (or error) sends the next event.
    const appWs = await open(`${wsBase}/v1/ws/app`, app.token);
    sockets.push(appWs);
    const acceptedAt = new Map<string, number>();
    const unexpected: string[] = [];
    let sent = 0;
    let loading = true;
    const send = () => {
      appWs.send(
        JSON.stringify({
          type: 'event',
          agent_id: agent.agent_id,
          thread_id: `load-${sent % 16}`,
          payload: { n: sent },
        }),
      );
      sent++;
    };
    const replied = new Set<string>();
    appWs.on('message', (data) => {
      const now = performance.now();
      const m = JSON.parse(data.toString());
      if (m.type === 'accepted') acceptedAt.set(m.event_id, now);
      else if (m.type === 'reply' || m.type === 'error') {
        if (m.type === 'reply') replied.add(m.event_id);
        if (m.type === 'error' && unexpected.length < 5) unexpected.push(data.toString());
        if (loading) send();
      }
    });
    for (let i = 0; i < IN_FLIGHT; i++) send();
    await sleep(LOAD_MS);

    const killedAt = performance.now();
    proc.child.kill('SIGKILL');
    loading = false;
    const exit = await proc.exited;
    expect(exit.signal).to.equal('SIGKILL');
    expect(unexpected, 'errors during the load').to.deep.equal([]);
    expect(acceptedAt.size, 'events accepted during the load').to.be.greaterThan(100);

    // Restart on the same file (with the test clock, to move past the lost-outcome age) and read the event log back.
    const restarted = await startBridgeProcess({ ...env, BRIDGE_TEST_CLOCK: '1' });
    const present = new Set((await allEvents(restarted)).map((e) => e.event_id as string));
    const pendingAfterRestart = (await allEvents(restarted)).filter(
      (e) => e.outcome === 'pending' && replied.has(e.event_id),
    ).length;
    // Past agent timeout + reconnect grace + 60 s since the restart: every row the crash left pending is marked lost.
    const advance = await restarted.http('POST', '/admin/v1/test/clock', {
      body: { advance_ms: LIMITS.agentTimeoutMs + LIMITS.agentReconnectGraceMs + 61_000 },
    });
    expect(advance.status).to.equal(200);
    let after: any[] = [];
    for (let i = 0; i < 50 && (i === 0 || after.some((e) => e.outcome === 'pending')); i++)
      after = await allEvents(restarted);
    restarted.child.kill('SIGTERM');
    expect(await restarted.exited, restarted.stderr()).to.deep.equal({ code: 0, signal: null });

    let missing = 0;
    let oldestMissingMs = 0;
    const lateMissing: string[] = [];
    for (const [eventId, at] of acceptedAt) {
      if (present.has(eventId)) continue;
      const age = killedAt - at;
      missing++;
      oldestMissingMs = Math.max(oldestMissingMs, age);
      if (age > WINDOW_MS) lateMissing.push(`${eventId} (${age.toFixed(1)} ms)`);
    }
    const lost = after.filter((e) => e.outcome === 'lost').length;
    console.log(
      `      crash: accepted=${acceptedAt.size} (${Math.round(acceptedAt.size / (LOAD_MS / 1000))}/s) missing=${missing} ` +
        `oldest missing at kill=${oldestMissingMs.toFixed(1)} ms (window ${WINDOW_MS} ms, EVENT_LOG_FLUSH_MS=${FLUSH_MS}, ${IN_FLIGHT} in flight, ${LOAD_MS} ms load); ` +
        `replied but pending after the restart=${pendingAfterRestart}, marked lost=${lost}`,
    );

    // (a) An SQLite file is a sound database after the crash and the restart's recovery (PostgreSQL's server was
    // never killed: only its client).
    if (!db.postgres) {
      const rows: { integrity_check: string }[] = await (await db.open()).raw('PRAGMA integrity_check');
      expect(rows.map((r) => r.integrity_check)).to.deep.equal(['ok']);
    }
    // (b) Nothing older than the commit window is lost.
    expect(
      lateMissing.length,
      `${lateMissing.length} of ${acceptedAt.size} events accepted more than ${WINDOW_MS} ms before the kill are missing after the restart ` +
        `(the oldest ${oldestMissingMs.toFixed(1)} ms old at the kill), e.g. ${lateMissing.slice(0, 3).join(', ')}`,
    ).to.equal(0);
    // (c) No row is left pending forever: the events in flight at the kill, and those answered within the lost
    // commit, end `lost` (the other rows keep the outcome they were committed with).
    expect(
      after.filter((e) => e.outcome === 'pending').map((e) => e.event_id),
      'rows still pending',
    ).to.deep.equal([]);
    expect(lost, 'rows marked lost').to.be.at.least(pendingAfterRestart);
  });
});
