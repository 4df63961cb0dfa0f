// Proof that the cancel profile can fail, as broken-resume-bridges.test.ts proves it for the resume profile: our
// bridge behind the fault proxy passes every scenario of the profile with no fault, and each fault of the extension
// (an agent not told, an agent told that did not opt in, late fragments forwarded, another app's event told apart)
// fails exactly the requirement it breaks, while a control scenario that does not depend on that rule keeps passing.
import { expect } from 'chai';
import { brokenExtensionBridges, type BrokenBridgeCase } from './broken-extension-bridges.js';

const CASES: BrokenBridgeCase[] = [
  {
    fault: 'cancel-not-told',
    scenarios: ['can-cancel-in-flight', 'can-refused'],
    fails: 'CAN-002',
    because: /agent1: no frame within 1500 ms/,
  },
  {
    fault: 'cancel-to-non-opted',
    scenarios: ['can-not-opted', 'can-refused'],
    fails: 'CAN-003',
    because: /"type":"cancel"/,
  },
  {
    fault: 'cancel-late-forwarded',
    scenarios: ['can-cancel-in-flight', 'can-refused'],
    fails: 'CAN-004',
    because: /"type":"token"/,
  },
  {
    fault: 'cancel-refusal-tells-apart',
    scenarios: ['can-refused', 'can-not-opted'],
    fails: 'CAN-005',
    because: /code: expected "CANCEL_REFUSED", got "PERMISSION_DENIED"/,
  },
];

describe('the cancel profile against broken bridges', function () {
  this.timeout(120_000);
  brokenExtensionBridges('cancel', CASES, {
    clean: (report) =>
      expect(
        report.requirements.map((r) => r.id).filter((id) => id.startsWith('RES-')),
        'no resume rule',
      ).to.deep.equal([]),
  });
});
