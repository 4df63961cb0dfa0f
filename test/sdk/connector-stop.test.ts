// How the agent connector stops (C8) and how long it keeps trying (C7), played on fake sockets and a frozen clock:
// a stop lets the events in flight finish within the drain, answers new ones at once without starting their handler,
// ends what is left with AGENT_ERROR and names it; a second signal ends the drain at once; maxRetries -1 never gives up.
import { expect } from 'chai';
import type WebSocket from 'ws';
import { LIMITS } from '../../generated/index.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import type { Logger } from '../../src/shared/logger.js';
import {
  Connector,
  resolveConnectorConfig,
  type AgentHandler,
  type ConnectorOptions,
  type StopResult,
} from '../../src/sdk/index.js';
import { CONNECTOR_NOTIFICATIONS } from '../../src/sdk/connector/notifications.js';
import { SAME_STOP_MS, stopOnSignals } from '../../src/sdk/connector/stop-signals.js';
import { FakeSocket } from '../helpers/fake-socket.js';

const AGENT = 'tutor';
const CUT_SHORT = 'The agent connector is shutting down.';
const NOT_STARTED =
  'The agent connector is stopping and did not start this event; it may be sent again once the agent is back.';

const event = (id: string) => ({
  type: 'event',
  event_id: id,
  app_id: 'app-one',
  agent_id: AGENT,
  thread_id: 't',
  session_key: `svc:app-one:t`,
  payload: {},
});

async function running(handler: AgentHandler, options: Partial<ConnectorOptions> = {}, reconnect: object = {}) {
  const clock = new AdjustableClock({ frozen: true, start: Date.parse('2026-11-22T12:00:00.000Z') });
  const sockets: FakeSocket[] = [];
  const logs: { level: string; fields: object; message: string }[] = [];
  const log = (level: string) => (fields: object, message: string) => void logs.push({ level, fields, message });
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
  const config = resolveConnectorConfig(
    {
      connection: { url: 'wss://bridge.test/v1/ws/agent', reconnect },
      agents: [{ agent_id: AGENT, token: `rla_${AGENT}_${'x'.repeat(40)}` }],
    },
    { source: 'test' },
  );
  const connector = new Connector(config, {
    handler,
    clock,
    logger,
    ...options,
    connection: {
      random: () => 0,
      createSocket: (url, headers) => {
        sockets.push(new FakeSocket(url, headers));
        return sockets.at(-1) as unknown as WebSocket;
      },
    },
  });
  const notes: ({ type: string } & Record<string, unknown>)[] = [];
  for (const type of CONNECTOR_NOTIFICATIONS) connector.on(type, (fields: object) => notes.push({ type, ...fields }));
  const started = connector.start();
  sockets[0]!.open();
  sockets[0]!.receive({ type: 'pong' });
  await started;
  const socket = () => sockets.at(-1)!;
  return {
    connector,
    clock,
    sockets,
    socket,
    logs,
    notes,
    endings: () => socket().sent.filter((m) => m.type === 'reply' || m.type === 'error'),
  };
}

/** Lets promise callbacks run (handlers are async); never waits for time. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('agent connector, stopping', function () {
  it('lets an event in flight finish within the drain, answers a new one at once without starting its handler, and names nothing', async function () {
    const release = gate();
    const started: string[] = [];
    const s = await running(async (e, ctx) => {
      started.push(e.eventId);
      await release.opened;
      ctx.reply('finished');
    });
    s.socket().receive(event('e1'));
    let result: StopResult | undefined;
    const stopping = s.connector.stop().then((r) => (result = r));
    await settle();
    expect(s.logs.find((l) => l.level === 'info')?.message).to.equal(
      `stopping: letting 1 event(s) in flight finish, for ${LIMITS.connectorDrainTimeoutMs} ms at most`,
    );

    s.socket().receive(event('e2'));
    expect(s.endings()).to.deep.equal([{ type: 'error', event_id: 'e2', code: 'AGENT_ERROR', error: NOT_STARTED }]);
    expect(started).to.deep.equal(['e1']);
    s.clock.advance(LIMITS.connectorDrainTimeoutMs - 1);
    await settle();
    expect(result, 'still draining').to.equal(undefined);

    release.open();
    await stopping;
    expect(s.endings().at(-1)).to.deep.include({ type: 'reply', event_id: 'e1', content: 'finished' });
    expect(result).to.deep.equal({ cutShort: [] });
    expect(s.notes.at(-1)).to.deep.equal({ type: 'stopped', cutShort: [] });
    expect(s.connector.isConnected(AGENT)).to.equal(false);
    expect(s.logs.filter((l) => l.level === 'warn')).to.deep.equal([]);
  });

  it('at the end of the drain ends what is left with AGENT_ERROR, as close() does, and says which events it cut short', async function () {
    const aborted: string[] = [];
    const s = await running(
      (e, ctx) => new Promise<void>(() => ctx.signal.addEventListener('abort', () => aborted.push(e.eventId))),
      { drainTimeoutMs: 5_000 },
    );
    s.socket().receive(event('e1'));
    s.socket().receive(event('e2'));
    let result: StopResult | undefined;
    const stopping = s.connector.stop().then((r) => (result = r));
    s.clock.advance(4_999);
    await settle();
    expect([result, s.endings()]).to.deep.equal([undefined, []]);

    s.clock.advance(1);
    await stopping;
    expect(s.endings()).to.deep.equal([
      { type: 'error', event_id: 'e1', code: 'AGENT_ERROR', error: CUT_SHORT },
      { type: 'error', event_id: 'e2', code: 'AGENT_ERROR', error: CUT_SHORT },
    ]);
    expect(aborted, 'handlers see ctx.signal abort').to.deep.equal(['e1', 'e2']);
    const cutShort = [
      { agentId: AGENT, eventId: 'e1' },
      { agentId: AGENT, eventId: 'e2' },
    ];
    expect(result).to.deep.equal({ cutShort });
    expect(s.notes.at(-1)).to.deep.equal({ type: 'stopped', cutShort });
    const warning = s.logs.find((l) => l.level === 'warn')!;
    expect(warning.message).to.equal('stop ended 2 event(s) still in flight with AGENT_ERROR: e1 (tutor), e2 (tutor)');
    expect(warning.fields).to.deep.equal({
      events: [
        { agent_id: AGENT, event_id: 'e1' },
        { agent_id: AGENT, event_id: 'e2' },
      ],
    });
  });

  it('close() during the drain cuts it short at once; both resolve with the same result', async function () {
    const s = await running(() => new Promise(() => {}));
    s.socket().receive(event('e1'));
    const stopping = s.connector.stop();
    await settle();
    const closing = s.connector.close();
    const [stopped, closed] = await Promise.all([stopping, closing]);
    expect(stopped).to.deep.equal({ cutShort: [{ agentId: AGENT, eventId: 'e1' }] });
    expect(closed).to.equal(stopped);
    expect(s.endings()).to.deep.equal([{ type: 'error', event_id: 'e1', code: 'AGENT_ERROR', error: CUT_SHORT }]);
    expect(s.notes.filter((n) => n.type === 'stopped')).to.have.length(1);
  });

  it('with nothing in flight, or a drain of 0, stops without waiting', async function () {
    const idle = await running(() => {});
    expect(await idle.connector.stop()).to.deep.equal({ cutShort: [] });
    const none = await running(() => new Promise(() => {}), { drainTimeoutMs: 0 });
    none.socket().receive(event('e1'));
    expect(await none.connector.stop()).to.deep.equal({ cutShort: [{ agentId: AGENT, eventId: 'e1' }] });
    expect(() => new Connector(none.connector.config, { handler: () => {}, drainTimeoutMs: -1 })).to.throw(
      RangeError,
      'drainTimeoutMs must be 0 or more, got -1',
    );
  });

  it('SIGTERM or SIGINT: the first stops with the drain; one more, a second or later, ends the drain at once; a repeat within the second is the same stop', async function () {
    const s = await running(() => new Promise(() => {}));
    s.socket().receive(event('e1'));
    let stopped: Promise<StopResult> | undefined;
    const onSignal = stopOnSignals(s.connector, {
      clock: s.clock,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      stopping: (result) => {
        stopped = result;
      },
    });
    onSignal('SIGINT');
    s.clock.advance(SAME_STOP_MS - 1);
    onSignal('SIGINT'); // the same Ctrl-C, forwarded by a parent such as npm
    await settle();
    expect(s.endings(), 'still draining').to.deep.equal([]);

    s.clock.advance(1);
    onSignal('SIGTERM');
    expect(await stopped).to.deep.equal({ cutShort: [{ agentId: AGENT, eventId: 'e1' }] });
    expect(s.endings()).to.deep.equal([{ type: 'error', event_id: 'e1', code: 'AGENT_ERROR', error: CUT_SHORT }]);
  });
});

describe('agent connector, reconnect for ever (maxRetries -1)', function () {
  it('keeps retrying past 50 failed attempts, each delay capped at maxDelayMs, and serves again once the bridge is back', async function () {
    const s = await running((_e, ctx) => ctx.reply('back'), {}, { maxRetries: -1 });
    s.socket().drop(1001);
    for (let i = 0; i < 60; i++) {
      s.clock.advance(LIMITS.reconnectMaxDelayMs);
      s.socket().drop(1006); // nothing listening yet
    }
    const attempts = s.notes.filter((n) => n.type === 'reconnecting');
    expect(attempts).to.have.length(61);
    expect(attempts.at(-1)).to.deep.include({ attempt: 61, delayMs: LIMITS.reconnectMaxDelayMs });
    expect(s.notes.some((n) => n.type === 'closed')).to.equal(false);

    s.clock.advance(LIMITS.reconnectMaxDelayMs);
    s.socket().open();
    s.socket().receive({ type: 'pong' });
    expect(s.connector.isConnected(AGENT)).to.equal(true);
    s.socket().receive(event('e1'));
    await settle();
    expect(s.endings()).to.deep.equal([{ type: 'reply', event_id: 'e1', content: 'back', done: true }]);
    await s.connector.close();
  });
});
