// Choosing what a run covers, before any scenario runs: --grep and --exclude over the scenarios' ids, titles and
// requirements, and the baseline file, whose line that is no entry stops the run at once (exit 2), naming it.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSuite } from './suite.js';

const URL = 'ws://127.0.0.1:9/v1';

/** The scenario ids `--list` prints for these options. */
async function listed(options: { grep?: string; exclude?: string }): Promise<string[]> {
  const { code, output } = await runSuite({ url: URL, list: true, ...options });
  expect(code).to.equal(0);
  return output
    .split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter(Boolean);
}

describe('conformance selection', function () {
  it('--exclude leaves out what matches, after --grep', async function () {
    const all = await listed({});
    const agt = await listed({ grep: '^agt-[a-z]' });
    expect(agt.length).to.be.greaterThan(3);
    expect(agt.every((id) => id.startsWith('agt-'))).to.equal(true);
    const withoutAgt = await listed({ exclude: '^agt-[a-z]' });
    expect(withoutAgt).to.deep.equal(all.filter((id) => !agt.includes(id)));
    // By requirement too: every scenario that names FLOW-003 is left out.
    const agtButTokens = await listed({ grep: '^agt-[a-z]', exclude: 'FLOW-003|AGT-003' });
    expect(agtButTokens).to.not.include('agt-fragment-size');
    expect(agtButTokens.length).to.be.lessThan(agt.length);
  });

  it('a baseline line that is no entry stops the run before it starts, naming the line', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'baseline-'));
    try {
      const file = join(dir, 'known.txt');
      writeFileSync(file, '# known failures\nAGT-009\nAGT-008@agt-bad-fields#7\nAGT 8\n');
      const { code, output } = await runSuite({ url: URL, expectedFailures: file, adminToken: 'x' });
      expect(code).to.equal(2);
      expect(output).to.equal(
        `bridge-conformance: ${file}, line 4: "AGT 8" is not an entry (REQ-001, REQ-001@scenario-id or REQ-001@scenario-id#step)`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
