// The Python package's own unit tests (python/tests, unittest), run with the interpreter CI installs: config
// interpolation and validation, fragment splitting, backoff, the errors a handler's failure becomes, and the cancel
// of both clients.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { ROOT, python } from './python-process.js';

describe('Python package: unit tests', function () {
  this.timeout(60_000);

  it('passes python -m unittest discover -s python/tests', function () {
    const run = spawnSync(python(), ['-m', 'unittest', 'discover', '-s', 'python/tests'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).to.equal(0);
    expect(run.stderr).to.match(/^OK/m);
  });
});
