// Which suite judged a target: `bridge-conformance --version` prints the suite's version.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const ROOT = join(import.meta.dirname, '../..');
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('the conformance suite\'s version', function () {
  it('bridge-conformance --version (and -V) prints package.json\'s version alone', async function () {
    for (const flag of ['--version', '-V']) {
      const run = await promisify(execFile)(process.execPath, ['bin/bridge-conformance.js', flag], { cwd: ROOT });
      expect(run, flag).to.deep.equal({ stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
    }
  });
});
