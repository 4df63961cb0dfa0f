// Which suite and which requirement set judged a target: `bridge-conformance --version` prints the suite's version,
// the requirement set's digest moves with every requirement added, removed or reworded (and with nothing else), and
// every report of either role states both: the console, the JSON report, JUnit and HTML.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { client } from '../../conformance/cli.js';
import { html } from '../../conformance/report/html.js';
import { junit } from '../../conformance/report/junit.js';
import { judge, type RunResult } from '../../conformance/results.js';
import { loadRequirements } from '../../conformance/scenario.js';
import { requirementsDigest, suiteVersion } from '../../conformance/suite-version.js';
import { ADMIN_TOKEN, startTestBridge } from '../helpers/bridge.js';
import { runSuite } from './suite.js';
import { describeErrors, validateConformanceReport } from '../../generated/index.js';

const ROOT = join(import.meta.dirname, '../..');
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const REGISTRY_FILE = join(ROOT, 'conformance/requirements.yaml');
const DIGEST = /^sha256:[0-9a-f]{16}$/;

describe("the conformance suite's version", function () {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'conformance-versions-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("bridge-conformance --version (and -V) prints package.json's version alone", async function () {
    for (const flag of ['--version', '-V']) {
      const run = await promisify(execFile)(process.execPath, ['bin/bridge-conformance.js', flag], { cwd: ROOT });
      expect(run, flag).to.deep.equal({ stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
    }
  });

  describe("the requirement set's digest", function () {
    const original = readFileSync(REGISTRY_FILE, 'utf8');
    const digestOf = (text: string) => {
      const file = join(dir, 'requirements.yaml');
      writeFileSync(file, text);
      return requirementsDigest(loadRequirements(file).values());
    };
    const shipped = requirementsDigest(loadRequirements().values());

    it('is sha256: and 16 hex characters, the same for a copy of the registry and for every load', function () {
      expect(shipped).to.match(DIGEST);
      expect(digestOf(original)).to.equal(shipped);
      expect(requirementsDigest(loadRequirements().values())).to.equal(shipped);
      expect(suiteVersion(loadRequirements())).to.deep.equal({ version: PACKAGE_VERSION, requirements: shipped });
    });

    it('does not move for comments, layout or the order of the file', function () {
      const lines = original.split('\n');
      const entries = lines.filter((l) => /^[A-Z]+-\d{3}:/.test(l));
      expect(digestOf(entries.join('\n')), 'no comments, no blank lines').to.equal(shipped);
      expect(digestOf([...entries].reverse().join('\n')), 'reversed').to.equal(shipped);
      expect(
        digestOf(`# a new comment\n${original.replace('AUTH-001: { level: MUST,', 'AUTH-001: {   level:   MUST,')}`),
        'spacing',
      ).to.equal(shipped);
    });

    it('moves when one requirement is reworded, changes level, source or cite, is added or is removed', function () {
      const auth1 = original.split('\n').find((l) => l.startsWith('AUTH-001:'))!;
      const changed = {
        reworded: original.replace(auth1, auth1.replace('authenticates on', 'authenticates at')),
        'one character of text': original.replace(auth1, auth1.replace('/ws/app.', '/ws/app')),
        level: original.replace(auth1, auth1.replace('level: MUST', 'level: SHOULD')),
        source: original.replace(auth1, auth1.replace('source: protocol', 'source: decision')),
        cite: original.replace(auth1, auth1.replace('#handshake-carriers', '#handshake-endpoints')),
        added: `${original}\nAUTH-099: { level: MAY, source: protocol, cite: "spec/protocol.md#handshake-carriers", text: "A new rule." }\n`,
        removed: original.replace(`${auth1}\n`, ''),
      };
      const digests = Object.entries(changed).map(([what, text]) => {
        expect(text, what).to.not.equal(original);
        const digest = digestOf(text);
        expect(digest, what).to.match(DIGEST).and.not.equal(shipped);
        return digest;
      });
      expect(new Set(digests).size, 'each change its own digest').to.equal(digests.length);
    });
  });

  describe('in every report', function () {
    const suite = suiteVersion(loadRequirements());

    /** Both values, as each format writes them. */
    const expectBoth = (formats: { console: string; json: RunResult; junit: string; html: string }) => {
      expect(formats.console.split('\n')[0]).to.equal(
        `bridge-conformance ${PACKAGE_VERSION}, requirements ${suite.requirements}`,
      );
      expect(formats.json.suite).to.deep.equal({ version: PACKAGE_VERSION, requirements: suite.requirements });
      // The whole report is what spec/conformance.yaml says a report is.
      expect(validateConformanceReport(formats.json), describeErrors(validateConformanceReport.errors)).to.equal(true);
      expect(formats.junit).to.match(
        new RegExp(
          `<testsuite [^>]*>\\n    <properties><property name="suite\\.version" value="${PACKAGE_VERSION.replace(/\./g, '\\.')}"/><property name="requirements\\.version" value="${suite.requirements}"/>`,
        ),
      );
      expect(formats.html).to.include(
        `<p>Judged by <code>bridge-conformance ${PACKAGE_VERSION}</code> against the requirements <code>${suite.requirements}</code></p>`,
      );
    };

    it("the writers state the suite's and the requirement set's versions of any result they are given", function () {
      const requirement = {
        id: 'A-001',
        level: 'MUST' as const,
        source: 'protocol' as const,
        cite: 'spec/protocol.md#x',
        text: 'A rule.',
      };
      const scenarios = [
        {
          id: 's1',
          file: 's1.yaml',
          title: 's1',
          requirements: ['A-001'],
          status: 'passed' as const,
          durationMs: 1,
          transcript: [],
        },
      ];
      const result: RunResult = {
        suite: { version: '9.8.7', requirements: 'sha256:0123456789abcdef' },
        role: 'server',
        profile: 'protocol',
        target: 'ws://x/v1',
        startedAt: new Date(0).toISOString(),
        durationMs: 1,
        hasClock: false,
        scenarios,
        ...judge([requirement], scenarios, new Set()),
      };
      expect(junit(result)).to.include(
        '<properties><property name="suite.version" value="9.8.7"/><property name="requirements.version" value="sha256:0123456789abcdef"/>',
      );
      expect(html(result)).to.include(
        '<code>bridge-conformance 9.8.7</code> against the requirements <code>sha256:0123456789abcdef</code>',
      );
    });

    const files = () => ({
      reportJson: join(dir, 'report.json'),
      junit: join(dir, 'report.xml'),
      html: join(dir, 'report.html'),
    });
    const read = (f: ReturnType<typeof files>) => ({
      json: JSON.parse(readFileSync(f.reportJson, 'utf8')) as RunResult,
      junit: readFileSync(f.junit, 'utf8'),
      html: readFileSync(f.html, 'utf8'),
    });

    it("server role: the console's first line, the JSON report's suite, JUnit's properties and the HTML header", async function () {
      const bridge = await startTestBridge({ testClock: true });
      const f = files();
      const run = await runSuite({
        url: `${bridge.url.replace(/^http/, 'ws')}/v1`,
        adminToken: ADMIN_TOKEN,
        grep: '^hb-ping-pong$',
        ...f,
      });
      expect(run.code, run.output).to.equal(0);
      expectBoth({ console: run.output, ...read(f) });
    });

    it('client role: the same four, for a client judged by the mock bridge', async function () {
      const f = files();
      const lines: string[] = [];
      const { log, error } = console;
      console.log = (...args: unknown[]) => void lines.push(args.join(' '));
      console.error = () => undefined;
      try {
        // A client that exits at once breaks the harness contract within moments (exit 3, incomplete), and the
        // reports are written all the same.
        const code = await client({
          role: 'app',
          command: 'exit 0',
          profile: 'protocol',
          grep: '^app-handshake$',
          list: false,
          slow: false,
          connectTimeoutMs: 5_000,
          ...f,
        });
        expect(code, lines.join('\n')).to.equal(3);
      } finally {
        console.log = log;
        console.error = error;
      }
      expectBoth({ console: lines.join('\n'), ...read(f) });
    });
  });
});
