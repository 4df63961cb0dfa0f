// `npm run demo` is the README's first example after set-up: it must keep working, end to end, in a real process.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

describe('npm run demo', function () {
  this.timeout(60_000);

  it('provisions, streams the agent reply through the bridge and exits 0', async function () {
    const root = resolve(import.meta.dirname, '../..');
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/demo.ts'], {
      cwd: root,
      timeout: 50_000,
    });
    expect(stdout).to.match(
      /app: +accepted [0-9A-Z]{26}, session svc:maths-tutor-[a-z0-9]+:classroom-[a-z0-9]+:lesson-1/,
    );
    expect(stdout).to.include('A prime number is a whole number greater than 1');
    expect(stdout).to.match(/app: +reply \(\d+ fragments, model demo-tutor, \d+ ms end to end\)/);
    expect(stdout).to.match(/agent: +runtime session svc:classroom-[a-z0-9]+:lesson-1/);
  });
});
