// What the agent connector does with frames off the agent endpoint's schema, played by a fake socket: an event it
// cannot read still gets its one `error` (agents never stay silent), anything else is logged and ignored; an error
// with only what the protocol shows of it (a type and a code) is reported without inventing an event id or a text.
import { expect } from 'chai';
import type WebSocket from 'ws';
import { AdjustableClock } from '../../src/shared/clock.js';
import type { Logger } from '../../src/shared/logger.js';
import { Connector, resolveConnectorConfig, type ConnectorEvents } from '../../src/sdk/index.js';
import { FakeSocket } from '../helpers/fake-socket.js';

describe('agent connector, frames off the schema', function () {
  it('answers an unreadable event with AGENT_ERROR and ignores a message type it does not know, logging it', async function () {
    const sockets: FakeSocket[] = [];
    const warnings: string[] = [];
    const nothing = () => {};
    const logger: Logger = {
      debug: nothing,
      info: nothing,
      error: nothing,
      warn: (_fields, message) => warnings.push(message),
    };
    const config = resolveConnectorConfig(
      {
        connection: { url: 'wss://bridge.test/v1/ws/agent' },
        agents: [{ agent_id: 'tutor', token: `rla_tutor_${'x'.repeat(40)}` }],
      },
      { source: 'test' },
    );
    const connector = new Connector(config, {
      handler: () => {},
      clock: new AdjustableClock({ frozen: true }),
      logger,
      connection: {
        createSocket: (url, headers) => {
          sockets.push(new FakeSocket(url, headers));
          return sockets.at(-1) as unknown as WebSocket;
        },
      },
    });
    const notes: ConnectorEvents['event-error'][0][] = [];
    connector.on('event-error', (note) => notes.push(note));
    const started = connector.start();
    sockets[0]!.open();
    sockets[0]!.receive({ type: 'pong' });
    await started;

    sockets[0]!.receive({ type: 'event', event_id: 'e1' });
    sockets[0]!.receive({ type: 'accepted', event_id: 'e2' });
    const problem = 'The agent connector could not read the event: app_id: is required';
    expect(sockets[0]!.sentOfType('error')).to.deep.equal([
      { type: 'error', event_id: 'e1', code: 'AGENT_ERROR', error: problem },
    ]);
    expect(notes).to.deep.equal([{ agentId: 'tutor', eventId: 'e1', code: 'AGENT_ERROR', message: problem }]);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(/^invalid frame from the bridge ignored: type: "accepted" is not a message type/);

    // Another bridge's error, as the protocol shows it (a type and a code): no event id, no text.
    sockets[0]!.receive({ type: 'error', event_id: null, code: 'INVALID_JSON' });
    expect(notes.at(-1)).to.deep.equal({
      agentId: 'tutor',
      code: 'INVALID_JSON',
      message: '(no text; code INVALID_JSON)',
    });
    expect(warnings.at(-1)).to.equal('the bridge reported INVALID_JSON: (no text; code INVALID_JSON)');
    await connector.close();
  });
});
