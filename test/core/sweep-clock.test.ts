// Whether an hourly sweep may trust the wall clock (F2): it moves with the monotonic clock, give or take a day.
import { expect } from 'chai';
import { describeStep, SweepClock } from '../../src/core/sweep-clock.js';
import { AdjustableClock } from '../../src/shared/clock.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('the clock the hourly sweeps trust', function () {
  it('trusts a wall clock that moved as far as the monotonic one, give or take a day, and takes that as the new normal', function () {
    const clock = new AdjustableClock({ frozen: true, start: 1_700_000_000_000 });
    const sweeps = new SweepClock(clock);
    clock.advance(HOUR);
    expect(sweeps.check()).to.deep.equal({ trusted: true });
    clock.stepWall(20 * HOUR); // a laptop suspended overnight: the monotonic clock stopped meanwhile
    clock.advance(HOUR);
    expect(sweeps.check()).to.deep.equal({ trusted: true });
    clock.stepWall(20 * HOUR); // another 20 h counts from the new normal, not from the start
    expect(sweeps.check()).to.deep.equal({ trusted: true });
  });

  it('refuses a step of more than a day either way, for as long as it stands', function () {
    const clock = new AdjustableClock({ frozen: true, start: 1_700_000_000_000 });
    const sweeps = new SweepClock(clock);
    clock.stepWall(400 * DAY);
    clock.advance(HOUR);
    expect(sweeps.check()).to.deep.equal({ trusted: false, stepMs: 400 * DAY });
    clock.advance(HOUR);
    expect(sweeps.check()).to.deep.equal({ trusted: false, stepMs: 400 * DAY });
    clock.stepWall(-400 * DAY);
    expect(sweeps.check()).to.deep.equal({ trusted: true });
    clock.stepWall(-DAY - 1);
    expect(sweeps.check()).to.deep.equal({ trusted: false, stepMs: -DAY - 1 });
    expect([describeStep(400 * DAY), describeStep(-2 * DAY), describeStep(-25 * HOUR)]).to.deep.equal([
      '400.0 days ahead of',
      '2.0 days behind',
      '1.0 days behind',
    ]);
  });
});
