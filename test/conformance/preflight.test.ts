// Before any scenario the runner checks what it was given; a problem is one clear line and exit 2, and the target
// is never blamed for the user's mistake.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningBridge } from '../../src/server.js';
import { ADMIN_TOKEN, testConfig } from '../helpers/bridge.js';
import { runSuite } from './suite.js';

describe('conformance preflight', function () {
  this.timeout(30_000);
  let bridge: RunningBridge;
  let ws: string;
  let dir: string;

  before(async () => {
    bridge = await startServer(testConfig({ testClock: true }));
    ws = bridge.url.replace(/^http/, 'ws');
    dir = mkdtempSync(join(tmpdir(), 'preflight-'));
  });
  after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('suggests /v1 for a URL without it, and runs no scenario', async () => {
    const run = await runSuite({ url: ws, adminToken: ADMIN_TOKEN });
    expect(run.code).to.equal(2);
    expect(run.output).to.include(`does not end in /v1, the protocol's version segment: did you mean ${ws}/v1?`);
    expect(run.report).to.equal(undefined);
  });

  it('says when nothing listens at the URL', async () => {
    const run = await runSuite({ url: 'ws://127.0.0.1:9/v1', adminToken: ADMIN_TOKEN });
    expect(run.code).to.equal(2);
    expect(run.output).to.match(/no bridge at ws:\/\/127\.0\.0\.1:9\/v1\/ws\/app: .*ECONNREFUSED/);
  });

  it('refuses to run with nothing to provision with, instead of skipping everything and passing', async () => {
    const saved = process.env.ADMIN_TOKEN;
    delete process.env.ADMIN_TOKEN;
    try {
      const run = await runSuite({ url: `${ws}/v1` });
      expect(run.code).to.equal(2);
      expect(run.output).to.include('nothing to provision with: give --admin-token');
    } finally {
      if (saved !== undefined) process.env.ADMIN_TOKEN = saved;
    }
  });

  it('blames the admin token, not the bridge, when the token is wrong', async () => {
    const run = await runSuite({ url: `${ws}/v1`, adminToken: 'wrong-admin-token-000000' });
    expect(run.code).to.equal(2);
    expect(run.output).to.match(/cannot provision through the admin API at .*: the admin token was refused \(HTTP 401/);
  });

  it('names the bad key of a settings file', async () => {
    const file = join(dir, 'settings.yaml');
    writeFileSync(file, 'agent_timeout_ms: soon\nrate_limit_burts: 10\n');
    const run = await runSuite({ url: `${ws}/v1`, adminToken: ADMIN_TOKEN, settings: file });
    expect(run.code).to.equal(2);
    expect(run.output).to.match(
      /--settings .*settings\.yaml: rate_limit_burts: is not a setting \(the settings are agent_timeout_ms, .*\); agent_timeout_ms: must be integer/,
    );
  });

  it('reports a provisioning command that fails, with its own words', async () => {
    const run = await runSuite({ url: `${ws}/v1`, provision: 'echo "no database configured" >&2; exit 1' });
    expect(run.code).to.equal(2);
    expect(run.output).to.include(
      'cannot provision through the provisioning command `echo "no database configured" >&2; exit 1`: the provisioning command failed on create (exit 1): no database configured',
    );
  });

  it('reports a provisioning answer that lacks a field, naming it', async () => {
    const run = await runSuite({ url: `${ws}/v1`, provision: `echo '{"orgs":{},"apps":{}}'` });
    expect(run.code).to.equal(2);
    expect(run.output).to.include(
      "the provisioning command's answer to create is not a ProvisionCreated: agents: is required",
    );
  });
});
