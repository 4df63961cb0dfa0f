// The tests run in lanes (test/lanes.cjs). `npm test` runs the fast lane: every test file that no slow lane names,
// several files at a time (each file's bridges, ports, databases and temporary directories are its own). Each slow
// lane has an npm script that sets TEST_LANE (`npm run test:conformance`, `test:browser`, `test:cluster`,
// `test:faults`); .ci/run runs every lane.
const { SLOW_LANES, FAST } = require('./test/lanes.cjs');

const name = process.env.TEST_LANE || 'fast';
const lane = name === 'fast' ? FAST : SLOW_LANES[name];
if (!lane) throw new Error(`TEST_LANE=${name}: no such lane (fast, ${Object.keys(SLOW_LANES).join(', ')})`);
// `npx mocha test/x.test.ts` runs that file alone (mocha would add it to the lane's files), one at a time.
const named = process.argv
  .slice(2)
  .some((arg, i, args) => /\.test\.ts$/.test(arg) && !/^--?(require|file|r)$/.test(args[i - 1] ?? ''));

module.exports = {
  'node-option': ['import=tsx'],
  spec: named ? [] : lane.files,
  ignore: named ? [] : name === 'fast' ? Object.values(SLOW_LANES).flatMap((l) => l.files) : [],
  extension: ['ts'],
  timeout: 20000,
  reporter: 'spec',
  require: ['test/helpers/hooks.ts'],
  ...(lane.jobs > 1 && !named ? { parallel: true, jobs: lane.jobs } : {}),
};
