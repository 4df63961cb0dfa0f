// Two releases on one bus during a rolling upgrade (O16): a node counts, logs and drops a message of another bus
// version or of a kind it does not know, and goes on with the rest; it answers at once a control question whose op
// it does not know, so the asker does not wait its second. The memory hub carries what a newer node would send.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { BusMessage, ControlOp } from '../../generated/index.js';
import { ClusterControl } from '../../src/cluster/control.js';
import { ClusterEngine } from '../../src/cluster/cluster-engine.js';
import { UnknownMessages } from '../../src/cluster/unknown-messages.js';
import { LOG_WINDOW_MS } from '../../src/core/burst-log.js';
import { registerClusterMetrics } from '../../src/ops/cluster-metrics.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import type { Logger } from '../../src/shared/logger.js';
import { parseMetrics, sample } from '../helpers/metrics.js';
import { specCheckedHub, takeOffSpec } from './spec-checked-hub.js';

/** A logger that keeps its warnings. */
function warnings(): Logger & { lines: [object, string][] } {
  const lines: [object, string][] = [];
  const nothing = () => {};
  return {
    lines,
    debug: nothing,
    info: nothing,
    error: nothing,
    warn: (fields, message) => lines.push([fields, message]),
  };
}

/** What a node of another release sends: not a message of this version's spec, so typed by hand. */
const foreign = (message: Record<string, unknown>) => message as unknown as BusMessage;

describe('messages of another release on the bus (O16)', function () {
  it('counts, logs and drops a message of another version or an unknown kind; the rest goes on', async function () {
    const hub = specCheckedHub();
    const log = warnings();
    const router = new ClusterEngine(hub.join('n1', log));
    const newer = hub.join('n2'); // a node of a newer release, speaking to n1 directly
    newer.send('n1', foreign({ k: 'agent', v: 2, id: 'tutor', online: true, stamp: 5 }));
    newer.send('n1', foreign({ k: 'gossip', v: 1, id: 'tutor' }));
    newer.send('n1', { k: 'agent', v: 1, id: 'tutor', online: true, stamp: 5 });
    newer.send('n1', foreign({ k: 'app', id: 'classroom', online: true })); // 0.2.0 sent no `v`: version 1
    await hub.settle();
    expect(takeOffSpec()).to.have.length(3); // the hub judges what was sent: the three foreign ones
    expect(router.counters.unknownMessages).to.deep.equal({ version: 1, kind: 1, op: 0 });
    expect(router.isAgentOnline('tutor')).to.equal(true); // only from the message of this version
    expect(router.isAppOnline('classroom')).to.equal(true);
    // The first of the burst at once; the next one waits for the end of the window.
    expect(log.lines).to.have.length(1);
    expect(log.lines[0]![0]).to.deep.equal({ unknown: { 'version 2 from n2': 1 }, total: 1 });

    const registry = new Registry();
    registerClusterMetrics(registry, {
      linked: () => true,
      peers: () => 1,
      traffic: () => ({ publishes: 0, messages: 0, dropped: 0 }),
      counters: () => router.counters,
      rateLimitFallbacks: () => 0,
    });
    const samples = parseMetrics(await registry.metrics());
    const unknown = (reason: string) => sample(samples, 'bridge_cluster_messages_unknown_total', { reason });
    expect([unknown('version'), unknown('kind'), unknown('op')]).to.deep.equal([1, 1, 0]);
    const lost = samples.filter((s) => s.name === 'bridge_cluster_lost_total').map((s) => s.labels.what);
    expect(lost).to.deep.equal(['framesForGoneAgent', 'messagesForGoneNode', 'agentsCutOff']);
  });

  it('logs a burst at a time: the first at once, then one line per window with the counts', function () {
    const clock = new AdjustableClock({ frozen: true, start: 1_000_000 });
    const log = warnings();
    const unknown = new UnknownMessages(log, clock);
    for (let i = 0; i < 1000; i++) unknown.readable('n2', { k: 'agent-msg', v: 2 });
    unknown.readable('n3', { k: 'shiny', v: 1 });
    expect(log.lines.map(([fields]) => fields)).to.deep.equal([{ unknown: { 'version 2 from n2': 1 }, total: 1 }]);
    clock.advance(LOG_WINDOW_MS);
    expect(log.lines.map(([fields]) => fields)[1]).to.deep.equal({
      unknown: { 'version 2 from n2': 999, 'kind shiny from n3': 1 },
      total: 1000,
    });
    clock.advance(LOG_WINDOW_MS * 3);
    expect(log.lines).to.have.length(2);
    expect(unknown.counts).to.deep.equal({ version: 1000, kind: 1, op: 0 });
  });

  it('answers at once a control question whose op it does not know; the asker names it missing and logs it', async function () {
    const hub = specCheckedHub();
    const askerLog = warnings();
    // A wait far beyond the test's timeout: the question can only end because every node answered.
    const asker = new ClusterControl(hub.join('n1'), () => undefined, askerLog, 3_600_000);
    const applied: ControlOp[] = [];
    const older = hub.join('n2');
    new ClusterControl(older, (change) => void applied.push(change), warnings());
    new ClusterControl(
      hub.join('n3'),
      (change) => (change.op === 'overview' ? { node_id: 'n3' } : undefined),
      warnings(),
    );
    let gathered: unknown;
    void asker.gather(foreign({ op: 'reindex' }) as unknown as ControlOp).then((g) => (gathered = g));
    await hub.settle();
    // n3 (this release too) does not know it either: both answered at once, neither applied anything.
    expect(gathered).to.deep.equal({ answers: [], missing: ['n2', 'n3'] });
    expect(applied).to.deep.equal([]);
    expect(older.unknownMessages.counts).to.deep.equal({ version: 0, kind: 0, op: 1 });
    expect(askerLog.lines.map(([fields]) => fields)).to.have.deep.members([
      { node: 'n2', op: 'reindex' },
      { node: 'n3', op: 'reindex' },
    ]);
    expect(askerLog.lines[0]![1]).to.equal('a node does not know this control op (another release? O16)');
    expect(takeOffSpec()).to.have.length(2); // the question to each node: an op this version does not have
    // The ops it knows are answered as before.
    expect(await asker.gather({ op: 'overview' })).to.deep.equal({ answers: [{ node_id: 'n3' }], missing: [] });
    expect(applied).to.deep.equal([{ op: 'overview' }]);
  });
});
