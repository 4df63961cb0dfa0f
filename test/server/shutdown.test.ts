// L11, on the real command (`node bin/bridge.js serve`): SIGTERM ends the events in flight with SHUTTING_DOWN,
// closes every connection with 1001, refuses new ones, flushes the event log and exits 0 within SHUTDOWN_TIMEOUT_MS.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { CLOSE_CODES } from '../../generated/index.js';
import { startEvent } from '../helpers/events.js';
import {
  allEvents,
  provisionPair,
  startBridgeProcess,
  stopBridgeProcesses,
  type BridgeProcess,
  type Exit,
} from '../helpers/process.js';
import { TestClient, type AgentClient, type AppClient } from '../helpers/ws-client.js';

const ADMIN_TOKEN = 'shutdown-test-admin-token-0123456789';
const SHUTDOWN_TIMEOUT_MS = 5_000;

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    }),
  ]);
}

/** After its last message the client sees nothing but the close, whose code is returned. */
async function closedWithNothingElse(client: TestClient<any>): Promise<number> {
  const { code } = await client.waitForClose(SHUTDOWN_TIMEOUT_MS);
  let next: unknown;
  await client.waitForMessage(10).then(
    (m) => (next = m),
    () => undefined,
  );
  expect(next, 'a message after the last one').to.equal(undefined);
  return code;
}

describe('graceful shutdown of bridge serve (SIGTERM)', function () {
  this.timeout(60_000);
  let dir: string;
  let clients: TestClient<any>[];

  beforeEach(function () {
    dir = mkdtempSync(join(tmpdir(), 'bridge-shutdown-'));
    clients = [];
  });

  afterEach(async function () {
    for (const c of clients) c.close();
    await stopBridgeProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (env: Record<string, string> = {}) =>
    startBridgeProcess({
      DATABASE_URL: `sqlite:${join(dir, 'b.sqlite')}`,
      ADMIN_TOKEN,
      LOG_LEVEL: 'silent',
      RATE_LIMIT_EVENTS_PER_SECOND: '0',
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      ...env,
    });

  async function connectPair(
    proc: BridgeProcess,
    appToken: string,
    agentToken: string,
  ): Promise<{ appClient: AppClient; agentClient: AgentClient }> {
    const agentClient = await TestClient.connect(proc.url, 'agent', agentToken);
    clients.push(agentClient);
    const appClient = await TestClient.connect(proc.url, 'app', appToken);
    clients.push(appClient);
    await agentClient.expectNothingBeforePong();
    await appClient.expectNothingBeforePong();
    return { appClient, agentClient };
  }

  it('ends the event in flight with SHUTTING_DOWN, closes both clients with 1001, refuses new connections and exits 0 in time', async function () {
    const proc = await start();
    const { app, agent } = await provisionPair(proc);
    const { appClient, agentClient } = await connectPair(proc, app.token, agent.token);

    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id, 'shutdown', { q: 'still thinking' });
    agentClient.send({ type: 'token', event_id, token: 'half an ' });
    await appClient.expect('token');

    const signalledAt = Date.now();
    proc.child.kill('SIGTERM');
    const exit: Promise<Exit & { afterMs: number }> = proc.exited.then((e) => ({
      ...e,
      afterMs: Date.now() - signalledAt,
    }));

    const error = await appClient.expect('error', SHUTDOWN_TIMEOUT_MS);
    expect(error).to.include({ type: 'error', event_id, agent_id: agent.agent_id, code: 'SHUTTING_DOWN' });
    expect(error.error).to.be.a('string').and.not.equal('');

    // The error is sent after the listener closed: a new connection now is refused (whether or not the process
    // has exited yet), on either endpoint.
    for (const [kind, token] of [
      ['app', app.token],
      ['agent', agent.token],
    ] as const) {
      let opened: TestClient<any> | undefined;
      let refusal: unknown;
      try {
        opened = await TestClient.connect(proc.url, kind, token);
        clients.push(opened);
      } catch (err) {
        refusal = err;
      }
      expect(opened, `a new ${kind} connection after SIGTERM`).to.equal(undefined);
      expect(refusal).to.be.instanceOf(Error);
    }

    expect(await closedWithNothingElse(appClient), 'app close code').to.equal(CLOSE_CODES.GOING_AWAY);
    expect(await closedWithNothingElse(agentClient), 'agent close code').to.equal(CLOSE_CODES.GOING_AWAY);

    const { code, signal, afterMs } = await within(exit, SHUTDOWN_TIMEOUT_MS + 5_000, 'exit after SIGTERM');
    expect({ code, signal }, proc.stderr()).to.deep.equal({ code: 0, signal: null });
    expect(afterMs, 'exit time after SIGTERM (ms)').to.be.below(SHUTDOWN_TIMEOUT_MS);
    expect(proc.stderr()).to.include('SIGTERM: shutting down');
  });

  it('flushes the event log on shutdown: every event answered just before SIGTERM, and the one in flight, is in the database after a restart', async function () {
    // The widest commit window, so the last events are still queued in memory when the signal arrives.
    const proc = await start({ EVENT_LOG_FLUSH_MS: '100' });
    const { app, agent } = await provisionPair(proc);
    const { appClient, agentClient } = await connectPair(proc, app.token, agent.token);

    const replied: string[] = [];
    for (let i = 0; i < 10; i++) {
      const { event_id } = await startEvent(appClient, agentClient, agent.agent_id, `thread-${i % 3}`, { i });
      agentClient.send({ type: 'token', event_id, token: `t${i}` });
      agentClient.send({ type: 'reply', event_id, content: `answer ${i}`, done: true });
      await appClient.expect('token');
      expect((await appClient.expect('reply')).event_id).to.equal(event_id);
      replied.push(event_id);
    }
    appClient.send({ type: 'event', agent_id: 'no-such-agent', thread_id: 't', payload: {} });
    const rejected = await appClient.expect('error');
    expect(rejected.code).to.equal('AGENT_NOT_FOUND');
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'in-flight', payload: {} });
    const inFlight = (await appClient.expect('accepted')).event_id;
    await agentClient.expect('event');

    proc.child.kill('SIGTERM');
    expect(await appClient.expect('error', SHUTDOWN_TIMEOUT_MS)).to.include({
      event_id: inFlight,
      code: 'SHUTTING_DOWN',
    });
    const exit = await within(proc.exited, SHUTDOWN_TIMEOUT_MS + 5_000, 'exit after SIGTERM');
    expect(exit, proc.stderr()).to.deep.equal({ code: 0, signal: null });

    const restarted = await start();
    const events = await allEvents(restarted);
    const byId = new Map(events.map((e) => [e.event_id, e]));
    for (const [i, id] of replied.entries()) {
      expect(byId.get(id), `replied event ${i} (${id})`).to.include({
        app_id: app.app_id,
        agent_id: agent.agent_id,
        thread_id: `thread-${i % 3}`,
        status: 'delivered',
        outcome: 'replied',
        code: null,
        tokens_used: 1,
      });
    }
    expect(byId.get(rejected.event_id!), 'the rejected event').to.include({
      status: 'rejected',
      outcome: 'rejected',
      code: 'AGENT_NOT_FOUND',
    });
    const ended = byId.get(inFlight);
    expect(ended, 'the event in flight').to.include({
      status: 'delivered',
      outcome: 'shutdown',
      code: 'SHUTTING_DOWN',
      thread_id: 'in-flight',
    });
    expect(ended.completed_at).to.be.a('string');
    expect(events).to.have.length(replied.length + 2);
  });
});
