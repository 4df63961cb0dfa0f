// Proof that the resume profile can fail, as broken-bridges.test.ts proves it for the others: our bridge behind the
// fault proxy passes every scenario of the profile with no fault, and each fault of the extension (a bridge that
// repeats fragments on resume, sends seq to a client that did not opt in, …) fails exactly the requirement it
// breaks, while a control scenario that does not depend on that rule keeps passing.
import { expect } from 'chai';
import { brokenExtensionBridges, type BrokenBridgeCase } from './broken-extension-bridges.js';

const CASES: BrokenBridgeCase[] = [
  // After a drop the app resumes after_seq 2 and gets seq 1 again: R4's "nothing repeated". The control resumes
  // nothing on the connection it opened first.
  {
    fault: 'resume-repeats-fragments',
    scenarios: ['res-resume-after-drop', 'res-not-opted'],
    fails: 'RES-004',
    because: /seq: expected 3, got 1|token: expected "three ", got "one "/,
  },
  {
    fault: 'seq-to-non-opted',
    scenarios: ['res-not-opted', 'res-reply-while-away'],
    fails: 'RES-001',
    because: /seq on a connection opened without \?resume=1/,
  },
  // The second instance's event gets the first one's token: caught on its accepted, before anything is resumed.
  {
    fault: 'resume-token-per-app',
    scenarios: ['res-wrong-token', 'res-resume-after-drop'],
    fails: 'RES-002',
    because: /the resume_token of an earlier event again/,
  },
  {
    fault: 'resume-token-unchecked',
    scenarios: ['res-wrong-token', 'res-resume-after-drop'],
    fails: 'RES-007',
    because: /expected \{"type":"error","code":"RESUME_REFUSED"\}/,
  },
  // Taken as "all of them", the resume has nothing to send: silence where RESUME_REFUSED was due.
  {
    fault: 'after-seq-ahead-accepted',
    scenarios: ['res-after-seq-ahead', 'res-resume-after-drop'],
    fails: 'RES-008',
    because: /app1: no frame within 1500 ms/,
  },
  // The unknown id is answered right; the other organization's live event is told apart from it.
  {
    fault: 'other-app-named',
    scenarios: ['res-other-app', 'res-resume-after-drop'],
    fails: 'RES-013',
    because: /code: expected "RESUME_GAP", got "RESUME_REFUSED"/,
  },
  // The window itself is kept (RES-012 passes before it); only the ending is misreported.
  {
    fault: 'gap-as-refused',
    scenarios: ['res-window', 'res-after-seq-ahead'],
    fails: 'RES-011',
    because: /code: expected "RESUME_GAP", got "RESUME_REFUSED"/,
  },
];

describe('the resume profile against broken bridges', function () {
  this.timeout(120_000);
  brokenExtensionBridges('resume', CASES, {
    everyRun: (report) => expect(report.hasClock, 'the test clock answers through the proxy').to.equal(true),
  });
});
