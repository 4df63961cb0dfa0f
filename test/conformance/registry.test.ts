// The requirement registry against what it cites and what checks it: every requirement cites an anchor that exists
// in spec/protocol.md, in part 1 (the protocol) when it is the protocol's, in part 2 when it is our decision, and
// among the resume extension's rules (R…) when it is the extension's;
// every requirement of either profile is checked by some scenario; and every scenario that could run on a fixtures
// file (no admin actions, no agent of its own making) fits the one fixtures layout.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_SCENARIOS } from '../../conformance/client/scenarios.js';
import { outsideLayout } from '../../conformance/provision/fixtures-file.js';
import { actionsNeeded, EVERY_FRAME, loadRequirements, loadScenarios } from '../../conformance/scenario.js';

const doc = readFileSync(join(import.meta.dirname, '../../spec/protocol.md'), 'utf8');
const anchorAt = (id: string) => doc.indexOf(`id="${id}"`);
const partTwo = anchorAt('part-2');

describe('the conformance registry', function () {
  const requirements = loadRequirements();
  const scenarios = loadScenarios(requirements);

  it("cites an anchor of spec/protocol.md for every requirement: part 1 for the protocol, part 2 for our decisions, the extensions' sections (R…, S…) for the extensions", function () {
    expect(partTwo).to.be.greaterThan(0);
    for (const r of requirements.values()) {
      const anchor = r.cite.replace('spec/protocol.md#', '');
      const at = anchorAt(anchor);
      expect(at, `${r.id} cites ${r.cite}`).to.be.greaterThan(-1);
      const cited = at < partTwo ? 'protocol' : /^[RS]\d+$/.test(anchor) ? 'extension' : 'decision';
      expect(cited, `${r.id} is a ${r.source} but cites ${r.cite}`).to.equal(r.source);
    }
  });

  it('has a scenario checking every requirement of both profiles (server and client roles)', function () {
    const checked = new Set([
      ...scenarios.flatMap((s) => s.requirements),
      ...CLIENT_SCENARIOS.flatMap((s) => s.requirements),
    ]);
    // ROB-… are robustness mode's: every one of its cases judges them (conformance/robustness/run.ts).
    const unchecked = [...requirements.keys()].filter((id) => !checked.has(id) && !id.startsWith('ROB-'));
    expect(unchecked).to.deep.equal([]);
    expect([...EVERY_FRAME].every((id) => requirements.has(id))).to.equal(true);
  });

  it('lets a fixtures file serve every scenario that needs no registrations of its own', function () {
    const plain = scenarios.filter(
      (s) =>
        actionsNeeded(s.steps).size === 0 &&
        Object.values(s.fixtures.agents ?? {}).every(
          (a) => a.ttl_days === undefined && a.description === undefined && a.name === undefined,
        ),
    );
    const misfits = plain.map((s) => [s.id, outsideLayout(s.fixtures)]).filter(([, why]) => why);
    expect(misfits).to.deep.equal([]);
    expect(plain.length, 'scenarios a fixtures file serves').to.be.greaterThan(25);
  });
});
