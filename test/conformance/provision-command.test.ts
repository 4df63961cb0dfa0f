// The example provisioning command (conformance/examples/provision-admin-api.mjs) against our own bridge, started
// with other settings the protocol allows (rate limit 100/s, burst 200; agent timeout 10 minutes) and told so with
// --settings: the protocol profile passes, and the run removes every organization it created.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningBridge } from '../../src/server.js';
import { ADMIN_TOKEN, testConfig } from '../helpers/bridge.js';
import { explain, runSuite, withVerdict } from './suite.js';

describe('the conformance suite through a provisioning command, with target settings', function () {
  this.timeout(240_000);
  let bridge: RunningBridge;
  let dir: string;

  before(async () => {
    bridge = await startServer(testConfig({ testClock: true, rateLimitPerSecond: 100, rateLimitBurst: 200, agentTimeoutMs: 600_000 }));
    dir = mkdtempSync(join(tmpdir(), 'provision-command-'));
  });
  after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes the protocol profile on our bridge with other allowed settings, and leaves nothing behind', async () => {
    const settings = join(dir, 'settings.yaml');
    writeFileSync(settings, 'agent_timeout_ms: 600000\nrate_limit_events_per_second: 100\nrate_limit_burst: 200\n');
    process.env.BRIDGE_ADMIN_URL = bridge.url;
    process.env.BRIDGE_ADMIN_TOKEN = ADMIN_TOKEN;
    const before = bridge.registry.organizations().length;
    const { code, report, output } = await runSuite({ url: `${bridge.url.replace(/^http/, 'ws')}/v1`, provision: 'node conformance/examples/provision-admin-api.mjs', settings });
    expect(withVerdict(report, 'failed'), explain(report)).to.deep.equal([]);
    expect(report!.counts.tested, 'every requirement of the profile').to.equal(report!.requirements.length);
    expect(report!.scenarios.find((s) => s.id === 'rate-limit-exceeded')!.status).to.equal('passed');
    expect(code).to.equal(0);
    expect(output).to.match(/provisioning: provisioning command `node conformance\/examples\/provision-admin-api\.mjs`/);
    expect(output).to.match(/clean-up: removed \d+ organization\(s\)/);
    expect(bridge.registry.organizations().length, 'organizations after the run').to.equal(before);
  });
});
