// `bridge-conformance server` against several nodes of one bridge. The nodes here are three TCP proxies in front of
// one real bridge: the same bridge at three URLs, so every verdict must be what it is at one URL, and the proxies
// show where each connection and call really went (the placement rule of conformance/nodes.ts).
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import type { RunResult } from '../../conformance/results.js';
import { startServer, type RunningBridge } from '../../src/server.js';
import { ADMIN_TOKEN, testConfig } from '../helpers/bridge.js';
import { freePort } from '../helpers/process.js';
import { explain, runSuite } from './suite.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

const UPGRADE = /^GET \/v1\/ws\/(app|agent)\b/;

/** Every requirement's verdict, for comparing two runs. */
const verdicts = (report: RunResult | undefined) =>
  Object.fromEntries((report?.requirements ?? []).map((r) => [r.id, r.verdict]));

/** The node each of a scenario's actors connected to (the last, for an actor that connected twice). */
function nodesOf(report: RunResult, scenario: string): Record<string, string> {
  const s = report.scenarios.find((x) => x.id === scenario);
  expect(s, `scenario ${scenario} in the report`).to.not.equal(undefined);
  return Object.fromEntries((s!.connections ?? []).map((c) => [c.actor, c.node]));
}

describe('the conformance suite against several nodes of one bridge', function () {
  this.timeout(300_000);
  let bridge: RunningBridge;
  let proxies: TcpProxy[];
  let nodes: string[];
  let direct: string;

  before(async () => {
    bridge = await startServer(testConfig({ testClock: true, rateLimitPerSecond: 20, rateLimitBurst: 40 }));
    direct = `${bridge.url.replace(/^http/, 'ws')}/v1`;
    const port = Number(new URL(bridge.url).port);
    proxies = await Promise.all([1, 2, 3].map(() => startTcpProxy(port)));
    nodes = proxies.map((p) => p.wsUrl);
  });
  beforeEach(() => {
    for (const p of proxies) p.requests.length = 0;
  });
  after(async () => {
    for (const p of proxies ?? []) await p.close();
    await bridge?.close();
  });

  for (const profile of ['protocol', 'bridge'] as const) {
    it(`gives the same verdicts in the ${profile} profile as at one URL, with each client placed as the README says`, async () => {
      const one = await runSuite({ url: direct, adminToken: ADMIN_TOKEN, profile });
      const three = await runSuite({ url: nodes, adminToken: ADMIN_TOKEN, profile });
      expect(three.code, explain(three.report)).to.equal(0);
      expect(verdicts(three.report), explain(three.report)).to.deep.equal(verdicts(one.report));
      expect(three.output).to.include(`against 3 nodes of one bridge (${nodes.join(', ')})`);
      const report = three.report!;
      expect(report.nodes).to.deep.equal(nodes);
      expect(one.report!.nodes, 'one URL: the report as before').to.equal(undefined);

      // The report says where each connection went, and it is where it went: every node got its share.
      const placed = report.scenarios.flatMap((s) => s.connections ?? []);
      proxies.forEach((p, i) => {
        const upgrades = p.requests.filter((r) => UPGRADE.test(r)).length;
        expect(upgrades - 1, `connections through node ${i + 1} (besides the preflight's probe)`).to.equal(
          placed.filter((c) => c.node === nodes[i]).length,
        );
        expect(upgrades - 1, `node ${i + 1} used`).to.be.greaterThan(10);
      });

      // An app and the agent it talks to are on different nodes; so are two connections of one agent, and two
      // instances of one app.
      const stream = nodesOf(report, 'flow-stream-and-reply');
      expect(stream.app1).to.not.equal(stream.agent1);
      const replaced = nodesOf(report, 'conn-replaced-by-second-connection');
      expect(replaced.agent1b).to.not.equal(replaced.agent1a);
      const instances = nodesOf(report, 'flow-app-instances');
      expect(new Set([instances.agent1, instances.app1, instances.app1b]).size).to.equal(3);

      // Provisioning and the test clock go through the first node only; the directory is asked on several.
      const admin = proxies.map((p) => p.requests.filter((r) => r.includes(' /admin/v1/')));
      expect(admin[0]!.some((r) => r.startsWith('POST /admin/v1/test/clock'))).to.equal(true);
      expect(admin.slice(1).flat(), 'admin calls through nodes 2 and 3').to.deep.equal([]);
      const directory = proxies.filter((p) => p.requests.some((r) => /^GET \/v1\/organizations\//.test(r)));
      expect(directory.length, 'nodes asked for the directory').to.be.greaterThan(1);
    });
  }

  it('takes the nodes from a repeated --url and from comma-separated lists, in the order given', async () => {
    const args = [
      'bin/bridge-conformance.js',
      'server',
      '--url',
      `${nodes[0]},${nodes[1]}`,
      '--url',
      nodes[2]!,
      '--admin-token',
      ADMIN_TOKEN,
      '--grep',
      '^flow-stream-and-reply$',
    ];
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(process.execPath, args, (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code) : 0, stdout: stdout + stderr }),
      );
    });
    expect(stdout).to.include(`against 3 nodes of one bridge (${nodes.join(', ')})`);
    expect(code, stdout).to.equal(0);
  });

  it('stops before any scenario when a node does not answer, naming that node (exit 2)', async () => {
    const silent = `ws://127.0.0.1:${await freePort()}/v1`;
    const run = await runSuite({ url: [nodes[0]!, silent, nodes[2]!], adminToken: ADMIN_TOKEN });
    expect(run.code).to.equal(2);
    expect(run.report).to.equal(undefined);
    expect(run.output).to.match(
      new RegExp(
        `node 2 of 3 \\(${silent.replace(/[.]/g, '\\.')}\\): no bridge at ${silent.replace(/[.]/g, '\\.')}/ws/app: .*ECONNREFUSED`,
      ),
    );
    expect(run.output).to.not.include(nodes[0]!);
  });

  it('refuses the same node given twice (it would prove nothing about a cluster)', async () => {
    const run = await runSuite({ url: `${nodes[0]},${nodes[1]},${nodes[0]}`, adminToken: ADMIN_TOKEN });
    expect(run.code).to.equal(2);
    expect(run.output).to.include(`--url ${nodes[0]} is given twice`);
  });
});
