// The runner against a bridge it may not administer: every scenario from one fixtures file in the one layout
// (fixtures-layout.yaml), and without a test clock. What it cannot do is SKIPPED with the reason, never passed,
// never failed, and no scenario leaves state that breaks the next one.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { LAYOUT } from '../../conformance/provision/fixtures-file.js';
import { startServer, type RunningBridge } from '../../src/server.js';
import { ADMIN_TOKEN, testConfig } from '../helpers/bridge.js';
import { explain, runSuite, withVerdict } from './suite.js';

/** The layout provisioned on `bridge`, written as a fixtures file. */
async function fixturesFile(bridge: RunningBridge, path: string): Promise<void> {
  const orgs = new Map<string, string>();
  for (const name of LAYOUT.orgs)
    orgs.set(name, (await bridge.registry.createOrganization({ name: `fixtures ${name}` })).org_id);
  const apps: Record<string, { app_id: string; org_id: string; token: string }> = {};
  for (const [name, org] of Object.entries(LAYOUT.apps)) {
    const app = await bridge.registry.createApp(orgs.get(org)!, { name });
    apps[name] = { app_id: app.app_id, org_id: orgs.get(org)!, token: app.token };
  }
  const agents: Record<string, object> = {};
  for (const [name, spec] of Object.entries(LAYOUT.agents)) {
    const agent = await bridge.registry.createAgent(orgs.get(spec.org)!, { name });
    if (spec.allowlist)
      await bridge.registry.setAllowlist(agent.agent_id, { app_ids: spec.allowlist.map((a) => apps[a]!.app_id) });
    agents[name] = {
      agent_id: agent.agent_id,
      org_id: orgs.get(spec.org)!,
      token: agent.token,
      name: agent.name,
      description: agent.description,
    };
  }
  writeFileSync(path, stringify({ apps, agents }));
}

describe('the conformance runner without admin rights or a test clock', function () {
  this.timeout(180_000);
  let dir: string;
  const bridges: RunningBridge[] = [];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'conformance-fixtures-'));
  });
  after(async () => {
    for (const b of bridges) await b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function bridge(testClock: boolean): Promise<{ url: string; bridge: RunningBridge }> {
    const b = await startServer(testConfig({ testClock, rateLimitPerSecond: 20, rateLimitBurst: 40 }));
    bridges.push(b);
    return { url: `${b.url.replace(/^http/, 'ws')}/v1`, bridge: b };
  }

  it('runs every scenario a fixtures file serves, in both profiles, with nothing failed or errored', async function () {
    const { url, bridge: b } = await bridge(true);
    const file = join(dir, 'fixtures.yaml');
    await fixturesFile(b, file);
    for (const profile of ['protocol', 'bridge'] as const) {
      const { report, output } = await runSuite({ url, fixtures: file, adminToken: ADMIN_TOKEN, profile });
      const status = (st: string) => report!.scenarios.filter((s) => s.status === st);
      expect(status('failed').length + status('errored').length, explain(report)).to.equal(0);
      expect(status('passed').length, profile).to.be.greaterThan(25);
      for (const s of status('skipped'))
        expect(s.reason, s.id).to.match(/needs registrations of its own|a fixtures file cannot/);
      expect(status('passed').map((s) => s.id)).to.include.members([
        'rate-limit-exceeded',
        'disc-several-agents',
        'conn-agent-timeout',
        'flow-no-retry',
      ]);
      expect(output).to.match(/fixtures file .* \(test clock through the admin API/);
      expect(output, "the user's registrations are not removed").not.to.match(/clean-up: removed/);
    }
  });

  it('skips scenarios that move time when the target has no test clock, and never passes them', async function () {
    const { url } = await bridge(false);
    const { report, code } = await runSuite({
      url,
      adminToken: ADMIN_TOKEN,
      grep: '^(conn-agent-timeout|hb-idle-timeout|auth-header-carrier)$',
      profile: 'bridge',
    });
    expect(report!.hasClock).to.equal(false);
    expect(Object.fromEntries(report!.scenarios.map((s) => [s.id, s.status]))).to.deep.equal({
      'auth-header-carrier': 'passed',
      'conn-agent-timeout': 'skipped',
      'hb-idle-timeout': 'skipped',
    });
    expect(withVerdict(report, 'skipped')).to.include('CONN-004');
    expect(code, 'a MUST was not tested: incomplete, not "conforms"').to.equal(3);
    expect(report!.overall.headline).to.match(/^incomplete: .*CONN-004 skipped/);
  });
});
