// Robustness mode's resource cases against the independent bridge and its fragile variants: the bridge written
// from the protocol alone stands every case (the resume flood is not applicable: it has no resume extension), and
// each fragile variant fails exactly the case that exposes it — a crash reported as such, with its case and seed.
import { expect } from 'chai';
import { describeErrors, validateConformanceReport } from '../../generated/index.js';
import { robustnessHelpers } from '../../conformance/cli.js';
import { html } from '../../conformance/report/html.js';
import { junit } from '../../conformance/report/junit.js';
import type { RunResult } from '../../conformance/results.js';
import { CAP_DEFAULTS, robustness } from '../../conformance/robustness/run.js';
import { startOtherBridge, type FragilityName } from './other-bridge/bridge.js';
import { captured } from './suite.js';

const PROVISION = 'node test/conformance/other-bridge/provision.mjs';

async function runResources(fragile: FragilityName[] = [], grep: string | null = '^resource\\.') {
  const bridge = await startOtherBridge({ fragile });
  process.env.OTHER_BRIDGE_ADMIN_URL = bridge.adminUrl;
  try {
    return await captured((reportJson) =>
      robustness(
        {
          url: bridge.url,
          provision: PROVISION,
          profile: 'protocol',
          list: false,
          ...(grep ? { grep } : {}),
          seed: 31,
          scale: 'quick',
          canaryMs: 2_000,
          timeoutMs: 2_000,
          reportJson,
          ...CAP_DEFAULTS,
        },
        robustnessHelpers,
      ),
    );
  } finally {
    await bridge.close();
  }
}

const statuses = (r: RunResult) =>
  Object.fromEntries(r.scenarios.filter((s) => s.id.startsWith('resource.')).map((s) => [s.id, s.status]));
const observed = (r: RunResult, id: string) =>
  Object.fromEntries((r.scenarios.find((s) => s.id === id)?.informational ?? []).map((o) => [o.what, o.value]));

describe('robustness mode: the resource cases', function () {
  this.timeout(120_000);

  it('the independent bridge stands every one, and each says what the bridge did', async function () {
    // Every case, the input cases too: a bridge written from the protocol alone passes the whole campaign.
    const { code, report, output } = await runResources([], null);
    expect(code, output).to.equal(0);
    expect(report!.scenarios.filter((s) => s.status !== 'passed' && s.status !== 'skipped')).to.deep.equal([]);
    expect(report!.scenarios.length).to.be.greaterThan(200);
    expect(statuses(report!)).to.deep.equal({
      'resource.connections': 'passed',
      'resource.upgrades': 'passed',
      'resource.frames': 'passed',
      'resource.stalled-reader': 'passed',
      'resource.event-flood': 'passed',
      'resource.resume-flood': 'skipped',
      'resource.directory': 'passed',
    });
    const resume = report!.scenarios.find((s) => s.id === 'resource.resume-flood')!;
    expect(resume.reason).to.match(/does not offer the resume extension/);
    expect(observed(report!, 'resource.connections')['connections open']).to.equal(150);
    expect(observed(report!, 'resource.directory')['agents listed']).to.equal(100);
    expect(observed(report!, 'resource.event-flood')['replies']).to.equal(1500);
    expect(report!.requirements.find((q) => q.id === 'ROB-002')?.verdict).to.equal('passed');
    expect(output).to.match(/^ {7}info: canary during the load \(ms\): \d+$/m);
    // Every report carries what was observed: the JSON (valid by its schema), JUnit's suite output, the HTML.
    expect(validateConformanceReport(report), describeErrors(validateConformanceReport.errors)).to.equal(true);
    expect(junit(report!)).to.match(
      /<system-out>INFORMATIONAL [^<]*resource\.connections: connections asked for: 150;/,
    );
    expect(html(report!)).to.match(/What the bridge did \(informational\)[\s\S]*agents listed: <strong>100<\/strong>/);
  });

  it('a bridge whose upgrades hold their slots forever fails the unfinished upgrades case, and only it', async function () {
    const { code, report, output } = await runResources(['upgrade-slots']);
    expect(code, output).to.equal(1);
    expect(statuses(report!)['resource.upgrades']).to.equal('failed');
    const others = Object.entries(statuses(report!)).filter(([id]) => id !== 'resource.upgrades');
    expect(others.filter(([, s]) => s === 'failed')).to.deep.equal([]);
    const upgrades = report!.scenarios.find((s) => s.id === 'resource.upgrades')!;
    expect(upgrades.failedRequirements).to.deep.equal(['ROB-002']);
    expect(upgrades.reason).to.match(/^during the load: the canary app \(another organization\)/);
  });

  it('a bridge that keeps every unread frame crashes on the stalled reader: said with the case and the seed', async function () {
    const { code, report, output } = await runResources(['keeps-unread-frames']);
    expect(code, output).to.equal(1);
    const s = statuses(report!);
    expect(s['resource.stalled-reader']).to.equal('failed');
    expect(report!.robustness!.stopped).to.equal(
      'the target stopped answering after this case (seed 31, case resource.stalled-reader)',
    );
    expect(
      ['resource.connections', 'resource.upgrades', 'resource.frames'].map((id) => s[id]),
      'the cases before it',
    ).to.deep.equal(['passed', 'passed', 'passed']);
    expect(
      ['resource.event-flood', 'resource.resume-flood', 'resource.directory'].map((id) => s[id]),
      'the cases after it: untested',
    ).to.deep.equal(['skipped', 'skipped', 'skipped']);
    expect(output).to.match(/the target stopped answering after this case \(seed 31, case resource\.stalled-reader\)/);
  });

  it('a bridge that puts every app frame in one queue, 5 ms each, fails the flood of events, and only it', async function () {
    const { code, report, output } = await runResources(['one-queue']);
    expect(code, output).to.equal(1);
    const failed = Object.entries(statuses(report!)).filter(([, s]) => s === 'failed');
    expect(failed).to.deep.equal([['resource.event-flood', 'failed']]);
    const flood = report!.scenarios.find((s) => s.id === 'resource.event-flood')!;
    expect(flood.failedRequirements).to.include('ROB-002');
    expect(flood.reason).to.match(/^during the load: the canary app \(another organization\) got no (answer|reply)/);
  });
});
