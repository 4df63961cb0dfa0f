// The runner against a bridge it may not administer: fixtures from a file, and no test clock. What it cannot do
// is SKIPPED with the reason, never passed.
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { server } from '../../conformance/cli.js';
import type { RunResult } from '../../conformance/results.js';
import { startServer, type RunningBridge } from '../../src/server.js';
import { testConfig } from '../helpers/bridge.js';

describe('the conformance runner without admin rights or a test clock', function () {
  this.timeout(60_000);
  let bridge: RunningBridge;
  let dir: string;

  before(async function () {
    bridge = await startServer(testConfig({ testClock: false }));
    dir = mkdtempSync(join(tmpdir(), 'conformance-fixtures-'));
  });

  after(async function () {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(options: { fixtures?: string; adminToken?: string; grep: string }): Promise<RunResult> {
    const report = join(dir, `report-${Math.random().toString(36).slice(2)}.json`);
    await server({ url: `${bridge.url.replace(/^http/, 'ws')}/v1`, realTime: false, realTimeMax: 20_000, timeoutMs: 2_000, list: false, reportJson: report, ...options });
    return JSON.parse(readFileSync(report, 'utf8'));
  }

  it('runs what a fixtures file allows and skips, with the reason, what needs the admin API', async function () {
    const org = await bridge.registry.createOrganization({ name: 'Fixture Org' });
    const app = await bridge.registry.createApp(org.org_id, { name: 'Fixture App' });
    const agent = await bridge.registry.createAgent(org.org_id, { name: 'Fixture Agent' });
    const file = join(dir, 'fixtures.yaml');
    writeFileSync(file, stringify({
      apps: { app1: { app_id: app.app_id, org_id: org.org_id, token: app.token } },
      agents: { agent1: { agent_id: agent.agent_id, org_id: org.org_id, token: agent.token, name: agent.name, description: agent.description } },
    }));
    const result = await run({ fixtures: file, grep: '^(flow-stream-and-reply|auth-header-carrier|life-deactivated-token|err-permission-denied)$' });
    const status = Object.fromEntries(result.scenarios.map((s) => [s.id, s.status]));
    expect(status).to.deep.equal({
      'auth-header-carrier': 'passed',
      'err-permission-denied': 'skipped',
      'flow-stream-and-reply': 'passed',
      'life-deactivated-token': 'skipped',
    });
    const reasons = Object.fromEntries(result.scenarios.map((s) => [s.id, s.reason ?? '']));
    expect(reasons['life-deactivated-token']).to.match(/changes registrations/);
    expect(reasons['err-permission-denied']).to.match(/fixtures file has no app app2|allowlist/);
  });

  it('skips scenarios that move time when the target has no test clock, and never passes them', async function () {
    const result = await run({ adminToken: testConfig().adminToken!, grep: '^(conn-agent-timeout|hb-idle-timeout|auth-header-carrier)$' });
    expect(result.hasClock).to.equal(false);
    const status = Object.fromEntries(result.scenarios.map((s) => [s.id, s.status]));
    expect(status).to.deep.equal({ 'auth-header-carrier': 'passed', 'conn-agent-timeout': 'skipped', 'hb-idle-timeout': 'skipped' });
    const timeout = result.requirements.find((r) => r.id === 'CONN-004')!;
    expect(timeout.verdict).to.equal('skipped');
  });
});
