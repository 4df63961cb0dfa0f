// A scenario file with a mistake fails loading with one line naming the file, the scenario, the step (index and
// kind) and the bad field: third parties write these files, and "invalid" alone would send them hunting.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRequirements, loadScenarios } from '../../conformance/scenario.js';

describe('conformance scenario files', function () {
  const requirements = loadRequirements();
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'scenario-files-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const loading = (steps: string) => {
    writeFileSync(
      join(dir, 'bad-one.yaml'),
      `title: A bad one\nrequirements: [HB-001]\nfixtures: { orgs: [org1], apps: { app1: org1 } }\nsteps:\n${steps}`,
    );
    return () => loadScenarios(requirements, dir);
  };

  it('names the file, the scenario, the step and its kind, and the missing field', function () {
    const steps =
      '  - connect: { actor: app1 }\n  - send: { actor: app1, frame: { type: ping } }\n  - expect: { actor: app1, checks: [HB-001] }\n';
    expect(loading(steps)).to.throw('bad-one.yaml: scenario "A bad one", step 3 (expect): expect.frame: is required');
  });

  it('names a misspelt field, a bad value, and a step nested in a repeat', function () {
    expect(loading('  - connect: { actor: app1, carier: query }\n')).to.throw(
      'step 1 (connect): connect.carier: is not a field of connect',
    );
    expect(loading('  - connect: { actor: app1, carrier: post }\n')).to.throw(
      'step 1 (connect): connect.carrier: must be one of "header", "query", "both", "none"',
    );
    const nested =
      '  - repeat: { times: 2, steps: [{ connect: { actor: app1 } }, { expectSilence: { actor: 7, checks: [HB-001] } }] }\n';
    expect(loading(nested)).to.throw(
      'step 1 (repeat), its step 2 (expectSilence): expectSilence.actor: must be string',
    );
  });

  it('names an unknown step kind and the kinds there are', function () {
    expect(loading('  - expct: { actor: app1 }\n')).to.throw(
      /scenario "A bad one", step 1 \(expct\) must have exactly one of connect, refused, send/,
    );
  });
});
