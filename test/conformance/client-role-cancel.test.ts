// The client role's cancel profile: our agent connector and app client (examples/conformance-*.ts) pass it; an
// independent test agent (broken-clients/cancel-agent.ts) passes it, and each of its broken variants fails exactly
// the requirement it breaks; a client that does not opt in (the minimal client: no ?cancel=1, never cancels) is
// never sent cancel and is not failed: its scenarios are skipped, not applicable.
import { expect } from 'chai';
import { requirementsOf } from '../../conformance/cli.js';
import { runClientScenarios } from '../../conformance/client/run-all.js';
import type { ClientRunOptions } from '../../conformance/client/run.js';
import { clientScenarios } from '../../conformance/client/scenarios.js';
import { judge, type ScenarioResult } from '../../conformance/results.js';
import { loadRequirements, PROFILES } from '../../conformance/scenario.js';

const SCALE = 10;
const CANCEL_AGENT = 'node --import tsx test/conformance/broken-clients/cancel-agent.ts';

async function runCancel(
  role: 'app' | 'agent',
  command: string,
  o: Partial<ClientRunOptions> = {},
): Promise<ScenarioResult[]> {
  const scenarios = clientScenarios(role, 'cancel', loadRequirements());
  const outcomes = await runClientScenarios(scenarios, { ...o, command, profile: 'cancel', timeScale: SCALE }, 4);
  return scenarios.map((s, i) => ({
    id: s.id,
    file: 'client/scenarios.ts',
    title: s.title,
    requirements: s.requirements,
    ...outcomes[i]!,
  }));
}

/** The verdict of every requirement of the client role's cancel profile that the results concern. */
function verdicts(results: ScenarioResult[]): Record<string, string> {
  const mine = requirementsOf('client', 'cancel').filter((r) => results.some((s) => s.requirements.includes(r.id)));
  return Object.fromEntries(judge(mine, results, new Set()).requirements.map((r) => [r.id, r.verdict]));
}

const explain = (results: ScenarioResult[]) =>
  results.map((r) => `${r.id}: ${r.status}${r.reason ? ` — ${r.reason}` : ''}`).join('\n');

describe('conformance client role, cancel profile', function () {
  this.timeout(120_000);

  it('has one scenario per role, run only with --profile cancel, judging the CLC rules and CLI-001 alone', () => {
    const registry = loadRequirements();
    const ids = (role: 'app' | 'agent', profile: (typeof PROFILES)[number]) =>
      clientScenarios(role, profile, registry).map((s) => s.id);
    expect(ids('agent', 'cancel')).to.deep.equal(['agent-cancel']);
    expect(ids('app', 'cancel')).to.deep.equal(['app-cancels']);
    for (const profile of PROFILES.filter((p) => p !== 'cancel'))
      for (const role of ['app', 'agent'] as const)
        expect(ids(role, profile), `${role}, ${profile}`).not.to.include.members(['agent-cancel', 'app-cancels']);
    expect(
      requirementsOf('client', 'cancel')
        .map((r) => r.id)
        .sort(),
    ).to.deep.equal(['CLC-001', 'CLC-002', 'CLC-003', 'CLC-004', 'CLI-001']);
    for (const profile of PROFILES.filter((p) => p !== 'cancel'))
      expect(requirementsOf('client', profile).filter((r) => r.id.startsWith('CLC-'))).to.deep.equal([]);
    expect(requirementsOf('server', 'cancel').filter((r) => r.id.startsWith('CLC-'))).to.deep.equal([]);
  });

  for (const role of ['agent', 'app'] as const) {
    it(`our ${role === 'agent' ? 'agent connector' : 'app client'} passes the cancel profile, every check seen to hold`, async () => {
      const results = await runCancel(role, `node --import tsx examples/conformance-${role}.ts`);
      expect(
        results.every((r) => r.status === 'passed'),
        explain(results),
      ).to.equal(true);
      const want = role === 'agent' ? ['CLC-001', 'CLC-002', 'CLI-001'] : ['CLC-003', 'CLC-004', 'CLI-001'];
      expect(verdicts(results)).to.deep.equal(Object.fromEntries(want.map((id) => [id, 'passed'])));
    });
  }

  it('an independent agent (ws alone) passes; ignoring cancel is a warning of CLC-002, closing or crashing on it fails CLC-001, each alone', async () => {
    const breaks = ['', 'ignore', 'close', 'crash'];
    const runs = await Promise.all(
      breaks.map((b) => runCancel('agent', CANCEL_AGENT, { env: { CANCEL_AGENT_BREAK: b } })),
    );
    const [sound, ignore, close, crash] = runs.map((r) => ({ results: r!, verdicts: verdicts(r!) }));
    expect(sound!.verdicts, explain(sound!.results)).to.deep.equal({
      'CLC-001': 'passed',
      'CLC-002': 'passed',
      'CLI-001': 'passed',
    });
    expect(ignore!.verdicts, explain(ignore!.results)).to.deep.equal({
      'CLC-001': 'passed',
      'CLC-002': 'warning',
      'CLI-001': 'passed',
    });
    expect(ignore!.results[0]!.reason).to.match(/later than 2 s after its cancel/);
    for (const [broken, why] of [
      [close!, /the agent closed its connection \(1000 cancelled\) \d+ ms after cancel/],
      [crash!, /the agent exited \(code 1\) \d+ ms after cancel/],
    ] as const) {
      expect(broken.verdicts, explain(broken.results)).to.deep.equal({
        'CLC-001': 'failed',
        'CLC-002': 'passed',
        'CLI-001': 'passed',
      });
      expect(broken.results[0]!.reason).to.match(why);
      expect(broken.results[0]!.harness).to.equal(undefined);
    }
  });

  it('a client that does not opt in is sent no cancel and not failed: its scenarios are skipped, not applicable', async () => {
    const minimal = (role: string) =>
      `node --import tsx test/conformance/broken-clients/minimal-client.ts --role ${role}`;
    const [agent, app] = await Promise.all([runCancel('agent', minimal('agent')), runCancel('app', minimal('app'))]);
    for (const r of [...agent!, ...app!]) {
      expect(r.status, explain([r])).to.equal('skipped');
      expect(r.reason).to.match(/^not applicable: the (agent did not opt in|app sent no cancel)/);
    }
    const sent = agent!.flatMap((r) => r.transcript ?? []).filter((l) => l.actor === 'mock' && l.direction === 'sent');
    expect(agent!.flatMap((r) => r.transcript ?? []).some((l) => /handshake \/v1\/ws\/agent \(/.test(l.text))).to.equal(
      true,
    );
    expect(sent.filter((l) => l.text.includes('"type":"cancel"'))).to.deep.equal([]);
    expect(Object.values({ ...verdicts(agent!), ...verdicts(app!) })).to.satisfy((v: string[]) =>
      v.every((x) => x === 'skipped'),
    );
  });
});
