// One app's or agent's lines within a budget per window; past it, one line that counts the rest.
import { expect } from 'chai';
import { LOG_WINDOW_MS } from '../../src/core/burst-log.js';
import { LINES_PER_CLIENT_PER_WINDOW, OwnerLog } from '../../src/core/owner-log.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import type { Logger } from '../../src/shared/logger.js';

function recording(): { log: Logger; lines: { fields: any; message: string }[] } {
  const lines: { fields: any; message: string }[] = [];
  const info = (fields: object, message: string) => void lines.push({ fields, message });
  return { log: { debug() {}, info, warn: info, error: info }, lines };
}

describe('OwnerLog', function () {
  it("writes a client's first lines of a window one by one, counts the rest by kind, and tells them at the window's end", function () {
    const clock = new AdjustableClock({ frozen: true, start: 0 });
    const { log, lines } = recording();
    const owner = new OwnerLog(log, clock, 'connections');
    const noisy = { kind: 'app' as const, id: 'app-noisy' };
    const quiet = { kind: 'agent' as const, id: 'agent-quiet' };
    for (let i = 0; i < LINES_PER_CLIENT_PER_WINDOW + 5; i++)
      owner.info(noisy, i % 2 ? 'closed' : 'opened', { n: i }, 'line');
    owner.info(quiet, 'opened', { n: 'q' }, 'line');
    expect(lines).to.have.length(LINES_PER_CLIENT_PER_WINDOW + 1);
    expect(lines.at(-1)!.fields).to.deep.equal({ n: 'q' }); // another client's line is not held back by the first

    clock.advance(LOG_WINDOW_MS);
    expect(lines.at(-1)).to.deep.equal({
      fields: { kind: 'app', app_id: 'app-noisy', untold: { opened: 3, closed: 2 } },
      message: `connections of app app-noisy not logged one by one in the last ${LOG_WINDOW_MS / 1000} s: 5`,
    });
    const told = lines.length;
    owner.info(noisy, 'opened', { n: 'next' }, 'line'); // a new window: its budget again
    expect(lines.slice(told)).to.deep.equal([{ fields: { n: 'next' }, message: 'line' }]);
  });

  it('tells what is untold when stopped, and nothing when nothing is', function () {
    const clock = new AdjustableClock({ frozen: true, start: 0 });
    const { log, lines } = recording();
    const owner = new OwnerLog(log, clock, 'events ended in error');
    const agent = { kind: 'agent' as const, id: 'agent-a' };
    for (let i = 0; i <= LINES_PER_CLIENT_PER_WINDOW; i++) owner.info(agent, 'AGENT_ERROR', {}, 'event ended in error');
    owner.stop();
    expect(lines.at(-1)!.fields).to.deep.equal({ kind: 'agent', agent_id: 'agent-a', untold: { AGENT_ERROR: 1 } });
    const before = lines.length;
    owner.stop();
    clock.advance(LOG_WINDOW_MS);
    expect(lines).to.have.length(before);
  });
});
