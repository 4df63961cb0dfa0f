// What the bridge's log says at info of the clients it serves (issue 33): each connection opened and closed, with
// its client, node, close code and reason and how long it lasted, and each event ended in error, with its ids and
// code; never a token or a payload.
import { expect } from 'chai';
import { ERRORS } from '../../generated/index.js';
import { startTestBridge } from '../helpers/bridge.js';
import { capturedLog } from '../helpers/log.js';
import { eventually } from '../helpers/eventually.js';
import { exchange, startEvent, TIMED_EVENT_SECRETS, timedEvent } from '../helpers/events.js';

describe('the log at info', function () {
  it('says each connection opened and closed: client, node, close code and reason, duration; and each event ended in error', async function () {
    const { log, lines } = capturedLog('info');
    const bridge = await startTestBridge({ nodeId: 'n7' }, { log });
    const { app, agent, appClient, agentClient } = await bridge.pair();
    const opened = lines().filter((l) => l.msg === 'connection open');
    expect(
      opened.map(({ kind, app_id, agent_id, org_id, node }) => ({ kind, id: app_id ?? agent_id, org_id, node })),
    ).to.have.deep.members([
      { kind: 'agent', id: agent.agent_id, org_id: agent.org_id, node: 'n7' },
      { kind: 'app', id: app.app_id, org_id: app.org_id, node: 'n7' },
    ]);

    const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);
    agentClient.send({ type: 'error', event_id, error: 'the model is down', code: 'AGENT_ERROR' });
    await appClient.expect('error');
    bridge.clock.advance(1_500);
    appClient.close(1000, 'done for today');
    await eventually(
      'the closed line',
      () => lines().some((l) => l.msg === 'connection closed'),
      (closedLine) => closedLine,
    );

    const ended = lines().find((l) => l.msg === 'event ended in error');
    expect(ended).to.include({
      event_id,
      app_id: app.app_id,
      agent_id: agent.agent_id,
      code: 'AGENT_ERROR',
      node: 'n7',
    });
    const closed = lines().find((l) => l.msg === 'connection closed');
    expect(closed).to.include({ kind: 'app', app_id: app.app_id, close_code: 1000, reason: 'done for today' });
    expect(closed.duration_ms).to.be.at.least(1_500);
    const text = JSON.stringify(lines());
    for (const secret of [app.token, agent.token, 'the model is down']) expect(text).not.to.include(secret);
  });

  it("says why the bridge closed a connection: the close code and the error's code", async function () {
    const { log, lines } = capturedLog('info');
    const bridge = await startTestBridge({}, { log });
    const { agent, agentClient } = await bridge.pair();
    await bridge.http('POST', `/admin/v1/agents/${agent.agent_id}/deactivate`);
    await agentClient.waitForClose();
    const closed = lines().find((l) => l.msg === 'connection closed' && l.agent_id === agent.agent_id);
    expect(closed).to.include({ kind: 'agent', close_code: ERRORS.TOKEN_REVOKED.closeCode, reason: 'TOKEN_REVOKED' });
  });
});

describe('the log at debug', function () {
  it('follows each event by its id: accepted, delivered, first fragment and ended, with times; no token or payload', async function () {
    const { log, lines } = capturedLog('debug');
    const bridge = await startTestBridge({ logLevel: 'debug', nodeId: 'n7' }, { log });
    const { app, agent, appClient, agentClient } = await bridge.pair();
    const event_id = await timedEvent(bridge.clock, appClient, agentClient, agent.agent_id);

    await eventually('the ended line', () => lines().some((l) => l.msg === 'event ended'), Boolean);
    const steps = lines().filter((l) => l.event_id === event_id);
    expect(steps.map((l) => l.msg)).to.deep.equal([
      'event accepted',
      'event delivered to its agent',
      'event: first fragment forwarded',
      'event ended',
    ]);
    expect(steps[0]).to.include({ app_id: app.app_id, agent_id: agent.agent_id, node: 'n7', level: 20 });
    expect(steps[1]).to.include({ agent_id: agent.agent_id, ms: 0 });
    expect(steps[2]).to.include({ ms: 40 });
    expect(steps[3]).to.include({ outcome: 'replied', ms: 100 });
    const text = JSON.stringify(lines());
    for (const secret of [...TIMED_EVENT_SECRETS, app.token, agent.token]) expect(text).not.to.include(secret);
  });

  it('writes no line per event at info', async function () {
    const { log, lines } = capturedLog('debug');
    const bridge = await startTestBridge({ logLevel: 'info' }, { log });
    const { agent, appClient, agentClient } = await bridge.pair();
    const { event_id } = await exchange(appClient, agentClient, agent.agent_id);
    expect(lines().filter((l) => l.event_id === event_id)).to.deep.equal([]);
  });
});
