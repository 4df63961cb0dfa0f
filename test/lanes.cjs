// Which test files run in which lane, and how many of a lane's files run at once (.mocharc.cjs reads it). A slow lane
// is slow for what it runs: real processes judged on real time, Chromium, several nodes over Redis, a crash under
// load. A test file that no slow lane names is in the fast lane, `npm test`: a new one is there unless put here.
// test/layering/lanes.test.ts checks that every file is in exactly one lane.
const SLOW_LANES = {
  // The conformance suite judged: against a second bridge, broken bridges and broken clients, through a
  // provisioning command, across nodes. Files at once: most of their time is spent waiting on real clients.
  conformance: {
    files: [
      'test/conformance/broken-bridges.test.ts',
      'test/conformance/broken-resume-bridges.test.ts',
      'test/conformance/broken-cancel-bridges.test.ts',
      'test/conformance/client-role-cancel.test.ts',
      'test/conformance/client-role-minimal.test.ts',
      'test/conformance/client-role.test.ts',
      'test/conformance/other-bridge.test.ts',
      'test/conformance/other-bridge/smoke.test.ts',
      'test/conformance/provision-command.test.ts',
      'test/conformance/robustness-resources.test.ts',
      'test/conformance/several-nodes.test.ts',
    ],
    jobs: 3,
  },
  // The dashboard and the documentation pages in Debian's Chromium (playwright-core), one browser at a time.
  browser: {
    files: [
      'test/dashboard/audit.test.ts',
      'test/dashboard/browser.test.ts',
      'test/dashboard/edit.test.ts',
      'test/dashboard/event-tail.test.ts',
      'test/dashboard/org-live.test.ts',
      'test/dashboard/overview.test.ts',
      'test/dashboard/search.test.ts',
      'test/dashboard/small-screen.test.ts',
      'test/dashboard/test-event.test.ts',
      'test/server/docs-browser.test.ts',
    ],
    jobs: 1,
  },
  // Several nodes over the services' PostgreSQL and Redis, one file at a time: Redis's pub/sub channels ignore
  // database numbers, so two files' nodes would hear each other.
  cluster: {
    files: ['test/cluster/*.test.ts'],
    jobs: 1,
  },
  // The Python package (python/): its unit tests and its clients through our bridge. They need a Python 3.11 that can
  // import websockets (Debian's python3-websockets; scripts/python.sh picks it), which the fast lane does not assume.
  python: {
    files: ['test/python/*.test.ts'],
    jobs: 1,
  },
  // A real process killed under load: its loss window is measured on real time, on a machine not busy with other tests.
  faults: {
    files: ['test/server/crash.test.ts'],
    jobs: 1,
  },
};

// Three files at a time: on two cores the lane is mostly CPU (its own and the processes it starts), and two or four at
// a time took as long or longer (about 95 s against 85-95 s).
const FAST = { files: ['test/**/*.test.ts'], jobs: 3 };

module.exports = { SLOW_LANES, FAST };
