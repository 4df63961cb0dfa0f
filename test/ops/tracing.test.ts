// Which events are traced (O17): every one by default, a share with the ratio samplers, decided before any span.
import { expect } from 'chai';
import { sampledOf } from '../../src/ops/tracing.js';

describe('the sampling of event traces', function () {
  const share = (sampled: () => boolean) => {
    let yes = 0;
    for (let i = 0; i < 20_000; i++) if (sampled()) yes++;
    return yes / 20_000;
  };

  it('traces every event with the always-on samplers, whatever the ratio says', function () {
    expect(share(sampledOf({ sampler: 'parentbased_always_on', ratio: 0 }))).to.equal(1);
    expect(share(sampledOf({ sampler: 'always_on', ratio: 0.5 }))).to.equal(1);
  });

  it('traces about the ratio of events with the ratio samplers, parent-based or not (events have no parent)', function () {
    // 20,000 draws at 0.25: the share's standard deviation is 0.003; ±0.02 is over six of them.
    expect(share(sampledOf({ sampler: 'parentbased_traceidratio', ratio: 0.25 }))).to.be.closeTo(0.25, 0.02);
    expect(share(sampledOf({ sampler: 'traceidratio', ratio: 0.25 }))).to.be.closeTo(0.25, 0.02);
    expect(share(sampledOf({ sampler: 'traceidratio', ratio: 0 }))).to.equal(0);
  });
});
