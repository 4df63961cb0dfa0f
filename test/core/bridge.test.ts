// The core without sockets or a database: fake connections record every frame (checked against the generated
// validators) into one shared log, so the order across connections is visible.
import { expect } from 'chai';
import {
  CLOSE_CODES,
  ENDPOINT_PATHS,
  LIMITS,
  describeErrors,
  validateServiceToAgentMessage,
  validateServiceToAppMessage,
  type Validator,
} from '../../generated/index.js';
import { makeBridge } from '../../src/core/bridge.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { Directory, type Principal } from '../../src/core/directory.js';
import type { ConnectionHandlers, Socket } from '../../src/core/transport.js';
import { principalToken, agentRecord } from '../helpers/core-harness.js';

type Peer = Socket & { closedWith?: [number, string]; handlers?: ConnectionHandlers };

type Sent = { to: string; frame: any };

function setup() {
  const directory = new Directory();
  directory.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
  const app = { app_id: 'classroom', org_id: 'org', name: 'Classroom', active: true, created_at: 0 };
  const agent = agentRecord('tutor', { name: 'Tutor', description: 'd' });
  directory.addApp(app);
  directory.addAgent(agent);
  const clock = new AdjustableClock({ frozen: true, start: 0 });
  const bridge = makeBridge({ directory, clock });
  const log: Sent[] = [];
  let ids = 0;
  const connect = (name: string, principal: Principal, validate: Validator<unknown>) => {
    const conn: Peer = {
      id: ++ids,
      send(text) {
        const frame = JSON.parse(text);
        if (!validate(frame)) throw new Error(`invalid frame to ${name}: ${text}: ${describeErrors(validate.errors)}`);
        log.push({ to: name, frame });
      },
      close(code, reason) {
        conn.closedWith = [code, reason];
      },
      bufferedBytes: () => 0,
    };
    conn.handlers = bridge.open(conn, principal);
    return conn;
  };
  const appConn = connect(
    'app',
    { kind: 'app', app, token: principalToken('app', 'classroom') },
    validateServiceToAppMessage,
  );
  const agentConn = connect(
    'agent',
    { kind: 'agent', agent, token: principalToken('agent', 'tutor') },
    validateServiceToAgentMessage,
  );
  const send = (conn: Peer, message: unknown) => conn.handlers!.message(JSON.stringify(message), false);
  return { bridge, clock, log, appConn, agentConn, connect, send, app, agent };
}

describe('the bridge core (no sockets, no database)', function () {
  it('sends accepted to the app before the event reaches the agent', function () {
    const { log, appConn, send } = setup();
    send(appConn, { type: 'event', agent_id: 'tutor', thread_id: 't', payload: { a: 1 } });
    expect(log.map((s) => `${s.to}:${s.frame.type}`)).to.deep.equal(['app:accepted', 'agent:event']);
    expect(log[1]!.frame.event_id).to.equal(log[0]!.frame.event_id);
  });

  it('forwards the payload byte for byte as the app sent it', function () {
    const { appConn, agentConn } = setup();
    const sent: string[] = [];
    const original = agentConn.send;
    agentConn.send = (text) => {
      sent.push(text);
      original(text);
    };
    appConn.handlers!.message(
      '{"type":"event","agent_id":"tutor","thread_id":"t","payload":{"b":[1,2.5,"\\u00e9"],"a":{}}}',
      false,
    );
    expect(sent[0]).to.match(/"payload":\{"b":\[1,2\.5,"é"\],"a":\{\}\}\}$/);
  });

  it('ends every event in flight with SHUTTING_DOWN and closes connections with 1001 on shutdown', function () {
    const { bridge, log, appConn, agentConn, send } = setup();
    send(appConn, { type: 'event', agent_id: 'tutor', thread_id: 't', payload: {} });
    bridge.shutdown();
    const last = log.at(-1)!;
    expect(last.to).to.equal('app');
    expect(last.frame).to.include({ type: 'error', code: 'SHUTTING_DOWN', agent_id: 'tutor' });
    expect((appConn as any).closedWith).to.deep.equal([1001, 'SHUTTING_DOWN']);
    expect((agentConn as any).closedWith).to.deep.equal([1001, 'SHUTTING_DOWN']);
    expect(bridge.stats()).to.deep.equal({ apps: 0, agents: 0, eventsInFlight: 0 });
  });

  it('keeps no state for an event once it has ended', function () {
    const { bridge, log, appConn, agentConn, send } = setup();
    send(appConn, { type: 'event', agent_id: 'tutor', thread_id: 't', payload: {} });
    const eventId = log[0]!.frame.event_id;
    expect(bridge.stats().eventsInFlight).to.equal(1);
    send(agentConn, { type: 'reply', event_id: eventId, content: 'x', done: true });
    expect(bridge.stats().eventsInFlight).to.equal(0);
  });

  it('measures latency on the injected clock', function () {
    const { clock, log, appConn, agentConn, send } = setup();
    send(appConn, { type: 'event', agent_id: 'tutor', thread_id: 't', payload: {} });
    clock.advance(42_000);
    send(agentConn, { type: 'reply', event_id: log[0]!.frame.event_id, content: 'x', done: true });
    expect(log.at(-1)!.frame.metadata.latency_ms).to.equal(42_000);
  });

  it('replies with every fragment of a long stream joined in order when the agent sends empty content (W10)', function () {
    const { log, appConn, agentConn, send } = setup();
    send(appConn, { type: 'event', agent_id: 'tutor', thread_id: 't', payload: {} });
    const eventId = log[0]!.frame.event_id;
    const fragments = Array.from({ length: 1000 }, (_, i) => `w${i} `);
    for (const token of fragments) send(agentConn, { type: 'token', event_id: eventId, token });
    send(agentConn, { type: 'reply', event_id: eventId, content: '', done: true });
    const reply = log.at(-1)!.frame;
    expect(reply.type).to.equal('reply');
    expect(reply.reply).to.equal(fragments.join(''));
    expect(reply.metadata.tokens_used).to.equal(1000);
  });

  describe('what a transport sees', function () {
    it('closes a socket whose unread bytes would pass the bound as a slow consumer: one error, the close, then nothing', function () {
      const { bridge, log, appConn, agentConn, send } = setup();
      let buffered = 0;
      appConn.bufferedBytes = () => buffered;
      send(appConn, { type: 'event', agent_id: 'tutor', thread_id: 't', payload: {} });
      const eventId = log[0]!.frame.event_id;
      buffered = LIMITS.sendBufferMaxBytes; // the app stopped reading
      send(agentConn, { type: 'token', event_id: eventId, token: 'lost' });
      send(agentConn, { type: 'token', event_id: eventId, token: 'also lost' });
      const toApp = log.filter((s) => s.to === 'app').map((s) => s.frame);
      expect(toApp.map((f) => f.type)).to.deep.equal(['accepted', 'error']);
      expect(toApp[1]).to.include({ code: 'SLOW_CONSUMER' });
      expect(appConn.closedWith).to.deep.equal([CLOSE_CODES.SLOW_CONSUMER, 'SLOW_CONSUMER']);
      expect(bridge.stats().apps).to.equal(0);
    });

    it('ends only the connection whose frame made the core fail, with INTERNAL_ERROR, and hears nothing more from it', function () {
      const { bridge, log, appConn, agentConn, send } = setup();
      agentConn.send = () => {
        throw new Error('a bug');
      };
      send(appConn, { type: 'event', agent_id: 'tutor', thread_id: 't', payload: {} });
      expect(log.at(-1)!.frame).to.include({ type: 'error', code: 'INTERNAL_ERROR' });
      expect(appConn.closedWith).to.deep.equal([CLOSE_CODES.INTERNAL_ERROR, 'INTERNAL_ERROR']);
      const before = log.length;
      send(appConn, { type: 'ping' });
      appConn.handlers!.closed(); // the socket's own close event comes after: nothing happens twice
      expect(log.length).to.equal(before);
      expect(bridge.stats()).to.include({ apps: 0, agents: 1 });
    });

    it('identifies a handshake from its raw facts and refuses a bad one with one error and its close code', function () {
      const { bridge, log } = setup();
      const socket = (): Peer => {
        const peer: Peer = {
          id: 99,
          send: (text) => log.push({ to: 'new', frame: JSON.parse(text) }),
          close: (code, reason) => void (peer.closedWith = [code, reason]),
          bufferedBytes: () => 0,
        };
        return peer;
      };
      const refused = socket();
      bridge
        .connect(refused, {
          path: ENDPOINT_PATHS.app,
          authorization: undefined,
          query: new URLSearchParams(),
          address: '10.0.0.1',
        })
        .message('{"type":"ping"}', false);
      expect(log.map((s) => s.frame)).to.deep.equal([
        {
          type: 'error',
          code: 'UNAUTHORIZED',
          error: 'No token: send the app token (rlk_…) as Authorization: Bearer <token> or ?token=<token>.',
        },
      ]);
      expect(refused.closedWith).to.deep.equal([CLOSE_CODES.UNAUTHORIZED, 'UNAUTHORIZED']);
      expect(() =>
        bridge.connect(socket(), {
          path: '/v1/ws/other',
          authorization: undefined,
          query: new URLSearchParams(),
          address: undefined,
        }),
      ).to.throw(/not a WebSocket endpoint/);
    });
  });
});
