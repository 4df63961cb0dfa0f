// The regression guard's judgement (bench/guard.ts): a figure inside the band its baseline runs spread over, widened
// by half its width, is noise; outside it, better or worse by the figure's direction.
import { expect } from 'chai';
import { bands, FIGURES, judgeFigure } from '../../bench/guard.js';

const results = (ratio: number, addedP99: number) => ({
  scenarios: {
    token_streaming: { ratio_bridge_over_relay: ratio, ratio_bridge_over_batched_relay: ratio * 0.8 },
    open_loop_latency: [{ rate: 10_000, added_p99_ms: addedP99 }],
    event_acceptance: {
      bridge: { closed: { accepted_per_s: 7_000 }, open: { latency_ms: { p99: 20 } } },
      relay: { closed: { accepted_per_s: 35_000 }, open: { latency_ms: { p99: 10 } } },
    },
  },
});

describe('bench guard', function () {
  const baseline = bands([results(1.0, 4), results(1.1, 5), results(1.04, 6)]);

  it("keeps each figure's runs and band, and leaves out a figure no run measured", function () {
    expect(baseline['1 fragments/s, bridge/relay']).to.include({ min: 1.0, max: 1.1, mean: 1.047 });
    expect(baseline['3 accepted/s, bridge/echo']!.runs).to.deep.equal([0.2, 0.2, 0.2]);
    expect(baseline).to.not.have.property('1 fragments/s, bridge/socket.io');
    expect(Object.keys(baseline)).to.have.length(FIGURES.length - 3); // no socket.io figure in these results
  });

  it('calls a figure inside the widened band noise, and one outside it better or worse by its direction', function () {
    const ratio = baseline['1 fragments/s, bridge/relay'];
    expect(judgeFigure(ratio, 1.14)).to.equal('within noise'); // band 1.0..1.1, widened by 0.05
    expect(judgeFigure(ratio, 1.2)).to.equal('better');
    expect(judgeFigure(ratio, 0.9)).to.equal('WORSE');
    const added = baseline['2 added p99 at 10k/s (ms)']; // lower is better: 4..6, widened by 1
    expect(judgeFigure(added, 7.5)).to.equal('WORSE');
    expect(judgeFigure(added, 2.5)).to.equal('better');
    expect(judgeFigure(undefined, 1)).to.equal('not in the baseline');
    expect(judgeFigure(ratio, null)).to.equal('not measured');
  });
});
