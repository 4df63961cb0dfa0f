// The core without sockets or a database: fake connections record every frame (checked against the generated
// validators) into one shared log, so the order across connections is visible.
import { expect } from 'chai';
import {
  describeErrors,
  validateServiceToAgentMessage,
  validateServiceToAppMessage,
  type Validator,
} from '../../generated/index.js';
import { makeBridge } from '../../src/core/bridge.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { Directory, hashToken, type Principal } from '../../src/core/directory.js';
import type { Connection } from '../../src/core/router.js';

type Sent = { to: string; frame: any };

function setup() {
  const directory = new Directory();
  directory.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
  const app = { app_id: 'classroom', org_id: 'org', name: 'Classroom', active: true, created_at: 0 };
  const agent = { agent_id: 'tutor', org_id: 'org', name: 'Tutor', description: 'd', ttl_days: 14, allowlist: null, active: true, created_at: 0 };
  directory.addApp(app);
  directory.addAgent(agent);
  const clock = new AdjustableClock({ frozen: true, start: 0 });
  const bridge = makeBridge({ directory, clock });
  const log: Sent[] = [];
  let ids = 0;
  const connect = (name: string, principal: Principal, validate: Validator<unknown>) => {
    const conn: Connection & { closedWith?: [number, string] } = {
      id: ++ids,
      send(text) {
        const frame = JSON.parse(text);
        if (!validate(frame)) throw new Error(`invalid frame to ${name}: ${text}: ${describeErrors(validate.errors)}`);
        log.push({ to: name, frame });
      },
      close(code, reason) {
        conn.closedWith = [code, reason];
      },
    };
    bridge.open(conn, principal);
    return conn;
  };
  const token = (kind: 'app' | 'agent', owner_id: string) => ({ hash: hashToken(owner_id), kind, owner_id, created_at: 0, expires_at: null });
  const appConn = connect('app', { kind: 'app', app, token: token('app', 'classroom') }, validateServiceToAppMessage);
  const agentConn = connect('agent', { kind: 'agent', agent, token: token('agent', 'tutor') }, validateServiceToAgentMessage);
  const send = (conn: Connection, message: unknown) => bridge.receive(conn, JSON.stringify(message), false);
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
    const { bridge, appConn, agentConn } = setup();
    const sent: string[] = [];
    const original = agentConn.send;
    agentConn.send = (text) => {
      sent.push(text);
      original(text);
    };
    bridge.receive(appConn, '{"type":"event","agent_id":"tutor","thread_id":"t","payload":{"b":[1,2.5,"\\u00e9"],"a":{}}}', false);
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
});
