// Our own bridge run with other settings the protocol allows (rate limit 100/s, burst 200; agent timeout 10
// minutes), told so with --settings: both profiles pass. And the example provisioning command
// (conformance/examples/provision-admin-api.mjs) provisions scenarios that use every action, and the run removes
// every organization it created. A provisioning command that speaks lines mode is started twice for a whole run (the
// request that learns its mode, then one process for the rest), one that does not is run once per request as before,
// and whatever goes wrong in lines mode is one clear error naming the request.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CommandProvisioner } from '../../conformance/provision/command.js';
import { hasClock, NotSupported, ProvisionError } from '../../conformance/provision/provisioner.js';
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

describe('a provisioning command in lines mode', function () {
  this.timeout(240_000);
  let bridge: RunningBridge;
  let dir: string;
  let url: string;
  let log: string;
  const example = 'node conformance/examples/provision-admin-api.mjs';
  /** What the command did, a line each: `start`, then the actions it was asked, `end` when its input ended. */
  const logged = () => readFileSync(log, 'utf8').trim().split('\n');
  const starts = () => logged().filter((l) => l === 'start').length;

  before(async () => {
    bridge = await startServer(testConfig({ testClock: true }));
    url = `${bridge.url.replace(/^http/, 'ws')}/v1`;
    dir = mkdtempSync(join(tmpdir(), 'provision-lines-'));
    writeFileSync(join(dir, 'fake.mjs'), FAKE_COMMAND);
    process.env.BRIDGE_ADMIN_URL = bridge.url;
    process.env.BRIDGE_ADMIN_TOKEN = ADMIN_TOKEN;
  });
  beforeEach(() => {
    log = join(dir, `log-${Date.now()}`);
    writeFileSync(log, '');
    process.env.FAKE_LOG = log;
  });
  after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The fake command, lines mode unless `once`, with a behaviour per action (or `action:id`). */
  const fake = (plan: Record<string, string> = {}, once = false) =>
    `node ${join(dir, 'fake.mjs')} '${JSON.stringify(plan)}'${once ? ' once' : ''}`;

  it('runs the two rotation scenarios with two starts of the example command, which exits at the end', async () => {
    const { code, report } = await runSuite({
      url,
      provision: `echo start >> "$FAKE_LOG"; ${example}; echo end >> "$FAKE_LOG"`,
      grep: 'life-rotation-grace',
    });
    expect(report!.scenarios.map((s) => `${s.id} ${s.status}`).sort(), explain(report)).to.deep.equal([
      'life-rotation-grace-agent passed',
      'life-rotation-grace-app passed',
    ]);
    expect(code).to.equal(0);
    // the first request learns the mode (that process ends with its input), the second process serves the rest
    expect(logged()).to.deep.equal(['start', 'end', 'start', 'end']);
  });

  it('ends a run of the command-line runner with its clean-up and verdict', async () => {
    const { stdout } = await run('node', [
      'bin/bridge-conformance.js',
      'server',
      '--url',
      url,
      '--provision',
      example,
      '--grep',
      'life-rotation-grace-agent',
    ]);
    expect(stdout).to.include('clean-up: removed 1 organization(s) the run created');
    expect(stdout).to.include('verdict: conforms');
  });

  it('still runs a command that does not speak lines mode once per request', async () => {
    const { code, report } = await runSuite({
      url,
      provision: `echo start >> "$FAKE_LOG"; env -u BRIDGE_PROVISION_LINES ${example}`,
      grep: '^(?:life-deactivated-token|err-permission-denied)$',
    });
    expect(
      report!.scenarios.map((s) => s.status),
      explain(report),
    ).to.deep.equal(['passed', 'passed']);
    expect(code).to.equal(0);
    // check, the clock probe, a create per scenario, the deactivation, the allowlist's setting, the clean-up
    expect(starts()).to.be.greaterThanOrEqual(6);
  });

  it('answers every request of a run from one process after the first', async () => {
    const p = new CommandProvisioner(fake());
    await p.check();
    expect(await hasClock(p)).to.equal(true);
    for (let i = 0; i < 50; i++) await p.advanceClock(30_000);
    expect(await p.rotate('app', 'a1')).to.equal('token-of-a1');
    expect(await p.listSessions('agent1')).to.deep.equal([]);
    await p.cleanup(['org1']);
    await p.advanceClock(0); // after the clean-up, a later request starts it again
    await p.close();
    const lines = logged();
    expect(lines.slice(0, 5)).to.deep.equal(['start', 'lines create', 'end', 'start', 'lines advance_clock']);
    expect(lines.slice(-6)).to.deep.equal([
      'lines list_sessions',
      'lines cleanup',
      'end',
      'start',
      'lines advance_clock',
      'end',
    ]);
    expect(lines.filter((l) => l === 'lines advance_clock')).to.have.length(52);
  });

  it('turns an {"unsupported"} line into a skip reason and an {"error"} line into a failure naming the request', async () => {
    const p = new CommandProvisioner(fake({ advance_clock: 'unsupported', rotate: 'error' }));
    await p.check();
    expect(await hasClock(p)).to.equal(false);
    const skip = await failure(p.advanceClock(1000));
    expect(skip).to.be.instanceOf(NotSupported);
    expect(skip.message).to.equal('the provisioning command does not support advance_clock: no test clock here');
    const error = await failure(p.rotate('agent', 'x'));
    expect(error).to.be.instanceOf(ProvisionError);
    expect(error.message).to.equal('the provisioning command failed on rotate: the database is down');
    await p.deactivate('app', 'a1');
    await p.close();
    expect(starts()).to.equal(2);
  });

  it('reports a command that dies mid-run with its last words, and starts it again for the next request', async () => {
    const p = new CommandProvisioner(fake({ 'rotate:doomed': 'die' }));
    await p.check();
    await p.deactivate('app', 'a1');
    const error = await failure(p.rotate('app', 'doomed'));
    expect(error.message).to.equal(
      'the provisioning command (lines mode) exited (exit 1): crashed on purpose, while answering rotate',
    );
    expect(await p.rotate('app', 'a2')).to.equal('token-of-a2');
    await p.close();
    expect(starts()).to.equal(3);
  });

  it('names the request of an answer that is not JSON, not an answer line, or out of turn', async () => {
    const p = new CommandProvisioner(fake({ set_allowlist: 'garbage', rotate: 'bare', deactivate: 'twice' }));
    await p.check();
    const garbage = await failure(p.setAllowlist('agent1', null));
    expect(garbage.message).to.equal(
      "the provisioning command's answer line to set_allowlist is not one JSON value: this is not JSON",
    );
    const bare = await failure(p.rotate('app', 'a1'));
    expect(bare.message).to.equal(
      'the provisioning command\'s answer line to rotate is none of {"answer": {…}}, {"unsupported": "why"}, {"error": "why"} (each with the request\'s "seq"): {"token":"token-of-a1"}',
    );
    // deactivate is answered twice: the second line reaches the runner before or after it sends the next request
    await p.deactivate('app', 'a1');
    const twice = await failure(p.advanceClock(0));
    expect(twice.message).to.be.oneOf([
      'the provisioning command (lines mode) wrote a line no request was waiting for: {"seq":1,"answer":{}}, after its answer to deactivate',
      'the provisioning command (lines mode) answered with seq 1 (deactivate), not seq 2: {"seq":1,"answer":{}}, while answering advance_clock',
    ]);
    await p.advanceClock(0);
    await p.close();
    expect(starts(), 'a new process after each broken one').to.equal(5);
  });

  it('stops a command that does not answer in time, naming the request', async () => {
    const p = new CommandProvisioner(fake({ list_sessions: 'hang' }), 1_000);
    await p.check();
    const started = Date.now();
    const error = await failure(p.listSessions('agent1'));
    expect(error.message).to.equal(
      'the provisioning command (lines mode) did not answer within 1 s (stopped), while answering list_sessions',
    );
    expect(Date.now() - started).to.be.lessThan(5_000);
    await p.close();
  });

  it('keeps the usual meaning of exits for a command run once per request', async () => {
    const p = new CommandProvisioner(fake({ advance_clock: 'unsupported', 'rotate:x': 'error' }, true));
    await p.check();
    expect(await hasClock(p)).to.equal(false);
    const error = await failure(p.rotate('agent', 'x'));
    expect(error.message).to.equal('the provisioning command failed on rotate (exit 1): the database is down');
    expect(await p.rotate('app', 'a1')).to.equal('token-of-a1');
    expect(starts(), 'one start per request').to.equal(4);
  });
});

const run = promisify(execFile);

/** The error a request failed with; a request that succeeds fails the test. */
async function failure(request: Promise<unknown>): Promise<Error> {
  try {
    await request;
  } catch (err) {
    return err as Error;
  }
  throw new Error('the request succeeded');
}

/**
 * A provisioning command for the tests, speaking lines mode when asked unless its second argument is `once`. Its first
 * argument maps an action (or `action:id`) to a behaviour: unsupported, error, die, hang, garbage, bare (the answer
 * without its line's envelope), twice; any other
 * action is answered. It logs to $FAKE_LOG: `start`, `<mode> <action>` per request, `end` when its input ends.
 */
const FAKE_COMMAND = `
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const log = (line) => appendFileSync(process.env.FAKE_LOG, line + '\\n');
const plan = JSON.parse(process.argv[2] ?? '{}');
const lines = process.argv[3] !== 'once' && process.env.BRIDGE_PROVISION_LINES === '1';
const answers = {
  create: () => ({ orgs: {}, apps: {}, agents: {} }),
  rotate: (r) => ({ token: 'token-of-' + r.id }),
  list_sessions: () => ({ sessions: [] }),
};
const out = (value) => process.stdout.write((typeof value === 'string' ? value : JSON.stringify(value)) + '\\n');
log('start');
function answer(request) {
  log((lines ? 'lines ' : 'once ') + request.action);
  const behaviour = plan[request.action + ':' + request.id] ?? plan[request.action] ?? 'ok';
  const ok = (answers[request.action] ?? (() => ({})))(request);
  const seq = request.seq;
  if (behaviour === 'die') {
    process.stderr.write('crashed on purpose\\n');
    process.exit(1);
  }
  if (behaviour === 'hang') return;
  if (!lines) {
    if (behaviour === 'unsupported' || behaviour === 'error') {
      process.stderr.write(behaviour === 'error' ? 'the database is down\\n' : 'no test clock here\\n');
      process.exit(behaviour === 'error' ? 1 : 3);
    }
    return out(ok);
  }
  if (behaviour === 'unsupported') return out({ seq, unsupported: 'no test clock here' });
  if (behaviour === 'error') return out({ seq, error: 'the database is down' });
  if (behaviour === 'garbage') return out('this is not JSON');
  if (behaviour === 'bare') return out(ok);
  out({ seq, answer: ok });
  if (behaviour === 'twice') out({ seq, answer: ok });
}
if (lines) {
  out({ provision_lines: 1 });
  for await (const line of createInterface({ input: process.stdin })) answer(JSON.parse(line));
  log('end');
} else {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  answer(JSON.parse(input));
}
`;
