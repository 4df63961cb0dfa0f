import { expect } from 'chai';
import { oneAtATime } from '../../src/core/repeat.js';

/** A run the test ends by hand, so it can ask for more runs while one is under way. */
function runs() {
  const started: Array<() => void> = [];
  const run = () => new Promise<void>((resolve) => started.push(resolve));
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { started, run, settle };
}

describe('oneAtATime', function () {
  it('makes the requests that come while a run is under way one more run after it, not a queue', async function () {
    const { started, run, settle } = runs();
    const sweeps = oneAtATime(run);
    sweeps.request();
    for (let i = 0; i < 1000; i++) sweeps.request();
    expect(started).to.have.length(1);
    started[0]!();
    await settle();
    expect(started).to.have.length(2);
    started[1]!();
    await settle();
    expect(started).to.have.length(2);
    sweeps.request();
    expect(started).to.have.length(3);
  });

  it('starts nothing more once stopped, not even the run asked for during the last one', async function () {
    const { started, run, settle } = runs();
    const sweeps = oneAtATime(run);
    sweeps.request();
    sweeps.request();
    sweeps.stop();
    started[0]!();
    await settle();
    sweeps.request();
    expect(started).to.have.length(1);
  });

  it('goes on after a run that failed', async function () {
    let calls = 0;
    const sweeps = oneAtATime(() => (++calls === 1 ? Promise.reject(new Error('database gone')) : Promise.resolve()));
    sweeps.request();
    sweeps.request();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).to.equal(2);
  });
});
