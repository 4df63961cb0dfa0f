// Burst logging: what a client can make happen at will is logged at most once per window, with its counts.
import { expect } from 'chai';
import { BurstLog } from '../../src/core/burst-log.js';
import { AdjustableClock } from '../../src/shared/clock.js';

describe('the burst log', function () {
  it('logs the first at once, the rest once per window with counts by kind, and ends a burst after a quiet window', function () {
    const clock = new AdjustableClock({ frozen: true, start: 0 });
    const lines: string[] = [];
    const log = new BurstLog<string>({
      clock,
      windowMs: 1_000,
      report: (counts, total) => lines.push(`${total} ${JSON.stringify(Object.fromEntries(counts))}`),
      quiet: () => lines.push('quiet'),
    });
    for (let i = 0; i < 1_000; i++) log.record(i % 4 ? 'a' : 'b');
    expect(lines).to.deep.equal(['1 {"b":1}']);
    expect(log.recent()?.counts.get('a')).to.equal(750);
    clock.advance(1_000);
    expect(lines).to.deep.equal(['1 {"b":1}', '999 {"a":750,"b":249}']);
    expect(log.recent()).to.equal(undefined);
    clock.advance(1_000);
    expect(lines.at(-1)).to.equal('quiet');
    log.record('a');
    expect(lines.at(-1)).to.equal('1 {"a":1}');
    log.stop();
  });

  it('counts several occurrences recorded at once as they are, in the first line and in the next', function () {
    const clock = new AdjustableClock({ frozen: true, start: 0 });
    const lines: string[] = [];
    const log = new BurstLog<string>({
      clock,
      windowMs: 1_000,
      report: (counts, total) => lines.push(`${total} ${JSON.stringify(Object.fromEntries(counts))}`),
    });
    log.record('rows', 40);
    log.record('rows', 2);
    log.record('other');
    expect(lines).to.deep.equal(['40 {"rows":40}']);
    expect(log.recent()?.counts.get('rows')).to.equal(42);
    clock.advance(1_000);
    expect(lines).to.deep.equal(['40 {"rows":40}', '3 {"rows":2,"other":1}']);
    log.stop();
  });

  it('writes what the window has not logged yet at once when flushed (a shutdown), and nothing when all is logged', function () {
    const clock = new AdjustableClock({ frozen: true, start: 0 });
    const lines: string[] = [];
    const log = new BurstLog<string>({
      clock,
      windowMs: 1_000,
      report: (counts, total) => lines.push(`${total} ${JSON.stringify(Object.fromEntries(counts))}`),
    });
    log.record('a');
    log.record('a', 5);
    log.flush();
    expect(lines).to.deep.equal(['1 {"a":1}', '5 {"a":5}']);
    log.flush();
    clock.advance(5_000);
    expect(lines, 'stopped: no line at the end of the window').to.have.length(2);
  });
});
