// Questions to every node (the overview, the live picture): the answers of those that answered, and the names of
// those that did not within the wait, so that the overview can say which nodes it lacks (D8's missing_nodes).
import { expect } from 'chai';
import { ClusterControl, type ControlOp } from '../../src/cluster/control.js';
import { silentLogger } from '../../src/shared/logger.js';
import { specCheckedHub, takeOffSpec } from './spec-checked-hub.js';

describe("the cluster control's questions", function () {
  afterEach(() => expect(takeOffSpec(), 'bus messages off the spec').to.deep.equal([]));

  it('gathers the answers of the nodes that answer and names those that do not within the wait, or went down', async function () {
    const hub = specCheckedHub();
    const node = (nodeId: string, apply: (change: ControlOp) => unknown) =>
      new ClusterControl(hub.join(nodeId), apply, silentLogger, 100);
    const overviewOf = (nodeId: string) => ({
      node_id: nodeId,
      now: { app_connections: 0, agent_connections: 0, apps_online: 0, agents_online: 0, events_in_flight: 0 },
      samples: [],
    });
    const asking = node('n1', () => undefined);
    node('n2', (change) => (change.op === 'overview' ? overviewOf('n2') : undefined));
    node('n3', () => new Promise(() => {})); // stuck: never answers
    node('n4', () => new Promise(() => {}));
    const gathered = asking.gather({ op: 'overview' });
    await hub.settle();
    hub.kill('n4'); // gone before it answered
    const { answers, missing } = await gathered;
    expect(answers).to.deep.equal([overviewOf('n2')]);
    expect(missing.sort()).to.deep.equal(['n3', 'n4']);
    expect(await asking.ask({ op: 'overview' })).to.deep.equal([overviewOf('n2')]); // ask: the answers alone
  });
});
