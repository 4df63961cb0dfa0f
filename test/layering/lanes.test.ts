// Every test file runs in exactly one lane (test/lanes.cjs, read by .mocharc.cjs): a slow lane names its files, the
// fast lane (`npm test`) takes the rest. A slow lane's entry that matches no file would leave a renamed file in the
// fast lane without anyone deciding it; one file in two lanes would run twice.
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve, sep } from 'node:path';
import { expect } from 'chai';

const ROOT = resolve(import.meta.dirname, '../..');
const { SLOW_LANES, FAST } = createRequire(import.meta.url)('../lanes.cjs') as {
  SLOW_LANES: Record<string, { files: string[]; jobs: number }>;
  FAST: { files: string[]; jobs: number };
};

const testFiles = readdirSync(join(ROOT, 'test'), { withFileTypes: true, recursive: true })
  .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
  .map((e) => relative(ROOT, join(e.parentPath, e.name)).split(sep).join('/'))
  .sort();

/** The lanes' patterns are paths with `*` (within a directory) and `**` (any directories), as mocha reads them. */
function matcher(pattern: string): RegExp {
  const body = pattern
    .split(/(\*\*\/|\*)/)
    .map((part) =>
      part === '**/' ? '(?:[^/]+/)*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${body}$`);
}

const filesOf = (patterns: string[]) => testFiles.filter((f) => patterns.some((p) => matcher(p).test(f)));

describe('test lanes', function () {
  it('reads the test files it judges (the reader is not blind)', function () {
    expect(testFiles).to.include.members(['test/layering/lanes.test.ts', 'test/cluster/nodes.test.ts']);
    expect(filesOf(['test/cluster/*.test.ts']))
      .to.include('test/cluster/nodes.test.ts')
      .and.not.include('test/conformance/other-bridge/smoke.test.ts');
    expect(filesOf(FAST.files)).to.deep.equal(testFiles);
  });

  it('puts every test file in exactly one lane: the fast lane has every file no slow lane names', function () {
    const slow = Object.values(SLOW_LANES).flatMap((lane) => filesOf(lane.files));
    expect(
      slow.filter((f, i) => slow.indexOf(f) !== i),
      'in two slow lanes',
    ).to.deep.equal([]);
    const fast = filesOf(FAST.files).filter((f) => !slow.includes(f));
    expect([...fast, ...slow].sort()).to.deep.equal(testFiles);
    expect(fast, 'the fast lane keeps the unit tests').to.include.members([
      'test/core/bridge.test.ts',
      'test/layering/lanes.test.ts',
    ]);
  });

  it('names in a slow lane only files that are there', function () {
    for (const [name, lane] of Object.entries(SLOW_LANES)) {
      for (const pattern of lane.files) expect(filesOf([pattern]), `${name}: ${pattern}`).to.not.be.empty;
    }
  });
});
