import { expect } from 'chai';
import { AdjustableClock } from '../../src/shared/clock.js';

describe('the adjustable clock', function () {
  it('stands still when frozen and moves only by advance', function () {
    const clock = new AdjustableClock({ frozen: true, start: 1_000 });
    expect(clock.now()).to.equal(1_000);
    expect(clock.advance(250)).to.equal(1_250);
    expect(clock.now()).to.equal(1_250);
  });

  it('fires due timers in due order, ties in the order they were set, and not early', function () {
    const clock = new AdjustableClock({ frozen: true, start: 0 });
    const fired: string[] = [];
    clock.setTimer(300, () => fired.push('c'));
    clock.setTimer(100, () => fired.push('a'));
    clock.setTimer(100, () => fired.push('b'));
    clock.advance(99);
    expect(fired).to.deep.equal([]);
    clock.advance(201);
    expect(fired).to.deep.equal(['a', 'b', 'c']);
  });

  it('runs each timer at its own due time, including timers that fired timers set within the advance', function () {
    const clock = new AdjustableClock({ frozen: true, start: 0 });
    const fired: number[] = [];
    clock.setTimer(10, () => {
      fired.push(clock.now());
      clock.setTimer(10, () => fired.push(clock.now()));
      clock.setTimer(1_000, () => fired.push(-1));
    });
    clock.advance(30);
    expect(fired).to.deep.equal([10, 20]);
    expect(clock.now()).to.equal(30);
  });

  it('never runs a cancelled timer', function () {
    const clock = new AdjustableClock({ frozen: true, start: 0 });
    let ran = false;
    clock.setTimer(5, () => (ran = true)).cancel();
    clock.advance(10);
    expect(ran).to.equal(false);
  });

  it('refuses to go backwards', function () {
    const clock = new AdjustableClock({ frozen: true, start: 0 });
    expect(() => clock.advance(-1)).to.throw(RangeError);
  });

  it('adds the advance on top of real time when not frozen', function () {
    const clock = new AdjustableClock({ frozen: false });
    const before = Date.now();
    clock.advance(3_600_000);
    expect(clock.now()).to.be.at.least(before + 3_600_000);
  });

  it('arms on real time, once an advance is over, a timer set within it that is still pending', async function () {
    // The real mode is what is under test here: its timers can only be seen firing on real time. Real time passes
    // during the advance too, so the margins are tens of milliseconds.
    const clock = new AdjustableClock({ frozen: false });
    const fired: string[] = [];
    clock.setTimer(10, () => {
      fired.push('in the advance');
      clock.setTimer(1, () => fired.push('inside, due within'));
      clock.setTimer(100, () => fired.push('on real time'));
      clock.setTimer(100, () => fired.push('cancelled')).cancel();
    });
    clock.advance(50);
    expect(fired).to.deep.equal(['in the advance', 'inside, due within']);
    for (let waited = 0; fired.length < 3 && waited < 2_000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(fired).to.deep.equal(['in the advance', 'inside, due within', 'on real time']);
  });

  it('reads the wall clock in whole milliseconds when not frozen, also in a timer an advance fires (PostgreSQL stores instants as bigint)', function () {
    const clock = new AdjustableClock({ frozen: false });
    const read: number[] = [];
    clock.setTimer(1_000, () => read.push(clock.now()));
    read.push(clock.advance(5_000));
    expect(read).to.have.length(2);
    for (const now of read) expect(Number.isInteger(now), String(now)).to.equal(true);
  });

  it('moves the monotonic reading with advance, and steps the wall clock alone with stepWall, firing nothing', function () {
    const clock = new AdjustableClock({ frozen: true, start: 1_000 });
    const fired: number[] = [];
    clock.setTimer(100, () => fired.push(clock.monotonic()));
    const start = clock.monotonic();
    clock.advance(50);
    expect([clock.now(), clock.monotonic() - start]).to.deep.equal([1_050, 50]);
    expect(clock.stepWall(-3_600_000)).to.equal(1_050 - 3_600_000);
    expect(clock.monotonic() - start).to.equal(50);
    clock.stepWall(400 * 86_400_000);
    expect(fired).to.deep.equal([]); // a timer is a duration: no step of the wall clock fires it
    clock.advance(50);
    expect(fired).to.deep.equal([start + 100]);
    expect(clock.now()).to.equal(1_100 - 3_600_000 + 400 * 86_400_000);
    expect(clock.advanced).to.equal(100);
  });
});
