// Our own bridge run with other settings the protocol allows (rate limit 100/s, burst 200; agent timeout 10
// minutes), told so with --settings: both profiles pass. And the example provisioning command
// (conformance/examples/provision-admin-api.mjs) provisions scenarios that use every action, and the run removes
// every organization it created.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningBridge } from '../../src/server.js';
import { ADMIN_TOKEN, testConfig } from '../helpers/bridge.js';
import { explain, runSuite, withVerdict } from './suite.js';

describe('the conformance suite with target settings, and through a provisioning command', function () {
  this.timeout(240_000);
  let bridge: RunningBridge;
  let dir: string;
  let settings: string;
  let url: string;

  before(async () => {
    bridge = await startServer(
      testConfig({ testClock: true, rateLimitPerSecond: 100, rateLimitBurst: 200, agentTimeoutMs: 600_000 }),
    );
    url = `${bridge.url.replace(/^http/, 'ws')}/v1`;
    dir = mkdtempSync(join(tmpdir(), 'provision-command-'));
    settings = join(dir, 'settings.yaml');
    writeFileSync(settings, 'agent_timeout_ms: 600000\nrate_limit_events_per_second: 100\nrate_limit_burst: 200\n');
  });
  after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const profile of ['protocol', 'bridge'] as const) {
    it(`passes the ${profile} profile on our bridge started with other allowed settings`, async () => {
      const { code, report } = await runSuite({ url, adminToken: ADMIN_TOKEN, settings, profile });
      expect(withVerdict(report, 'failed'), explain(report)).to.deep.equal([]);
      expect(report!.counts.tested, 'every requirement of the profile').to.equal(report!.requirements.length);
      expect(report!.settings).to.include({ agent_timeout_ms: 600_000, rate_limit_burst: 200 });
      expect(code).to.equal(0);
    });
  }

  it('provisions every action through the example command and leaves nothing behind', async () => {
    process.env.BRIDGE_ADMIN_URL = bridge.url;
    process.env.BRIDGE_ADMIN_TOKEN = ADMIN_TOKEN;
    const before = bridge.directory.orgs.size;
    const scenarios = [
      'flow-stream-and-reply',
      'err-permission-denied',
      'life-deactivated-token',
      'life-rotation-grace-app',
      'sess-expiry-and-recreation',
    ];
    const { code, report, output } = await runSuite({
      url,
      provision: 'node conformance/examples/provision-admin-api.mjs',
      settings,
      grep: `^(?:${scenarios.join('|')})$`,
    });
    expect(report!.scenarios.map((s) => `${s.id} ${s.status}`).sort(), explain(report)).to.deep.equal(
      scenarios.map((s) => `${s} passed`).sort(),
    );
    expect(code).to.equal(0);
    expect(output).to.match(
      /provisioning: provisioning command `node conformance\/examples\/provision-admin-api\.mjs`; test clock on/,
    );
    expect(output).to.match(/clean-up: removed 5 organization\(s\)/);
    expect(bridge.directory.orgs.size, 'organizations after the run').to.equal(before);
  });
});
