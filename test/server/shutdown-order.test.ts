// The shutdown order follows from the order the bridge's services start in (src/server/services.ts): this pins both,
// so that a service added at another place is a decision seen in review. What each position is for is said where the
// service is made (src/server/*.ts).
import { expect } from 'chai';
import { startServer } from '../../src/server.js';
import { testConfig } from '../helpers/bridge.js';
import { serviceLog } from '../helpers/service-log.js';

const START_ORDER = [
  'database lock',
  'database',
  'metrics server',
  'http connections',
  'registrations',
  'event log',
  'sessions',
  'unauthenticated connections',
  'event tracing',
  'lost outcomes',
  'sweeps',
  'bridge',
  'overview sampling',
  'token expiries',
  'metrics port',
  'http listening',
];

describe('the order of the services of a bridge', function () {
  it('starts them in dependency order and stops them in the reverse: no new connection first, the lock last', async function () {
    const log = serviceLog();
    const running = await startServer(testConfig({ metricsPort: 0 }), { log });
    expect(log.lines).to.deep.equal(START_ORDER.map((s) => `started ${s}`));
    log.lines.length = 0;
    await running.close();
    expect(log.lines).to.deep.equal(START_ORDER.toReversed().map((s) => `stopped ${s}`));
  });
});
