// `bridge-conformance robustness --url ws://host:port/v1 …`: a seeded campaign of hostile input (cases.ts) against
// any bridge. Each case is one scenario result: what it sent, what it expected, what came; its requirements are the
// case's own (the generator names them), ERR-010 or AGT-009 (the sender's connection still answers ping) and ROB-001
// (another organization, the canary, is still served). The verdict goes through judge() like the other roles'. This
// file is the run: options, provisioning, the loop, the report; one case is judge-case.ts, the canary canary.ts, the
// connections connections.ts, the loopback check and caps safety.ts.
import { randomInt } from 'node:crypto';
import { checkProvisioner, checkUrl, PreflightError, probeNodes } from '../preflight.js';
import type { Provisioner } from '../provision/provisioner.js';
import type { RunResult, ScenarioResult } from '../results.js';
import { judge } from '../results.js';
import { inProfile, loadRequirements, type Profile, type Requirement } from '../scenario.js';
import { suiteLine, suiteVersion } from '../suite-version.js';
import { Target } from '../target.js';
import { percentile } from './canary.js';
import type { InputCase } from './cases.js';
import { Connections, type Fixture } from './connections.js';
import { expectationOf, runCase, titleOf, untested } from './judge-case.js';
import { Budget, checkLoopback } from './safety.js';

export { CAP_DEFAULTS, checkLoopback } from './safety.js';

export interface RobustnessOptions {
  url: string;
  adminUrl?: string;
  adminToken?: string;
  provision?: string;
  seed?: number;
  cases?: number;
  canaryMs: number;
  timeoutMs: number;
  iOwnThisTarget?: boolean;
  maxConnections: number;
  maxBytes: number;
  maxDurationMs: number;
  grep?: string;
  exclude?: string;
  list: boolean;
  profile: Profile;
  reportJson?: string;
  junit?: string;
  html?: string;
  expectedFailures?: string;
}

/** What cli.ts lends (no import circle): its provisioning, selection, baseline and reports, and the generator. */
export interface RobustnessHelpers {
  provisionerFor(options: RobustnessOptions, target: Target, firstNode: string): Provisioner;
  selected<T extends { id: string; title: string; requirements: string[] }>(
    all: T[],
    options: Pick<RobustnessOptions, 'grep' | 'exclude'>,
  ): T[];
  baselineOf(options: RobustnessOptions): Parameters<typeof judge>[2];
  finish(result: RunResult, options: RobustnessOptions): number;
  requirementsOf(role: 'robustness', profile: Profile): Requirement[];
  /** The case generator; by default conformance/robustness/cases.ts. */
  generate?: (options: { seed: number; cases?: number }) => InputCase[];
}

export async function robustness(options: RobustnessOptions, helpers: RobustnessHelpers): Promise<number> {
  try {
    return await run(options, helpers);
  } catch (err) {
    if (!(err instanceof PreflightError)) throw err;
    console.error(`bridge-conformance: ${err.message}`);
    return 2;
  }
}

async function run(options: RobustnessOptions, helpers: RobustnessHelpers): Promise<number> {
  const seed = options.seed ?? randomInt(1, 2 ** 31 - 1);
  console.log(`bridge-conformance robustness: seed ${seed} (give --seed ${seed} to reproduce these cases)`);
  checkUrl(options.url);
  checkLoopback(options.url, options.iOwnThisTarget);
  const profile = options.profile;
  const baseline = helpers.baselineOf(options);
  const registry = loadRequirements();
  const generate = helpers.generate ?? (await import('./cases.js')).generateCases;
  const generated = generate({ seed, ...(options.cases ? { cases: options.cases } : {}) });
  for (const c of generated)
    for (const e of [c.expect, ...(c.ours ? [c.ours] : [])])
      if (!registry.has(e.requirement))
        throw new PreflightError(`case ${c.id} names ${e.requirement}, not a requirement`);
  const inScope = generated.filter((c) => c.source === 'protocol' || profile === 'bridge');
  const left = generated.length - inScope.length;
  const cases = helpers.selected(
    inScope.map((c) => ({ ...c, title: titleOf(c), requirements: [expectationOf(c, profile).requirement] })),
    options,
  );
  if (options.list) {
    for (const c of cases)
      console.log(`${c.id.padEnd(28)} ${c.endpoint.padEnd(6)} ${c.requirements[0]!.padEnd(9)} ${c.title}`);
    return 0;
  }
  const caps = {
    connections: options.maxConnections,
    bytes: options.maxBytes,
    durationMs: options.maxDurationMs,
  };
  console.log(
    `caps: at most ${caps.connections} connections, ${caps.bytes} bytes sent, ${caps.durationMs} ms (--max-connections, --max-bytes, --max-duration-ms)`,
  );
  await probeNodes([options.url], options.timeoutMs * 3);
  const target = new Target({ timeoutMs: options.timeoutMs });
  const provisioner = helpers.provisionerFor(options, target, options.url);
  await checkProvisioner(provisioner);
  const suite = suiteVersion(registry);
  console.log(suiteLine(suite));
  console.log(
    `bridge-conformance: ${cases.length} robustness cases, ${profile} profile${left ? ` (${left} decision cases need --profile bridge)` : ''}, against ${options.url}; provisioning: ${provisioner.description}`,
  );

  const budget = new Budget(options);
  const startedAt = new Date().toISOString();
  const created = await provisioner.create(
    {
      orgs: ['org1', 'org2'],
      apps: { app1: 'org1', app2: 'org2' },
      agents: { agent1: { org: 'org1' }, agent2: { org: 'org2' } },
    },
    'robustness',
  );
  const createdOrgs = provisioner.createsRegistrations ? Object.values(created.orgs).map((o) => o.org_id) : [];
  const pair = (app: string, agent: string): Fixture => ({
    appId: created.apps[app]!.app_id,
    appToken: created.apps[app]!.token,
    agentId: created.agents[agent]!.agent_id,
    agentToken: created.agents[agent]!.token,
  });
  const fixtures = { target: pair('app1', 'agent1'), canary: pair('app2', 'agent2') };
  const conns = new Connections({ url: options.url, timeoutMs: options.timeoutMs, profile }, budget);
  const canaryLatencies: { case: string; ms: number }[] = [];
  const results: ScenarioResult[] = [];
  let stopped: string | undefined;
  let caseNumber = 0;
  for (const c of cases) {
    caseNumber++;
    if (stopped) {
      results.push(untested(c, profile, stopped));
      continue;
    }
    const ran = await runCase(c, { seed, profile, options, conns, budget, fixtures, caseNumber });
    results.push(ran.result);
    if (ran.latencyMs !== undefined) canaryLatencies.push({ case: c.id, ms: ran.latencyMs });
    stopped = ran.stopped;
    if (ran.crashed) console.log(`bridge-conformance: ${stopped}; the remaining cases are untested`);
  }
  conns.closeAll();
  const leftBehind: string[] = [];
  if (createdOrgs.length && !stopped?.startsWith('the target stopped')) {
    try {
      await provisioner.cleanup(createdOrgs);
    } catch {
      leftBehind.push(...createdOrgs);
    }
  } else leftBehind.push(...(stopped?.startsWith('the target stopped') ? createdOrgs : []));
  if (stopped) console.log(`bridge-conformance: the run stopped: ${stopped}`);

  const named = new Set(results.flatMap((s) => s.requirements));
  const judged = [
    ...[...registry.values()].filter((r) => named.has(r.id) && !r.id.startsWith('ROB-') && inProfile(r, profile)),
    ...helpers.requirementsOf('robustness', profile),
  ];
  const verdicts = judge(judged, results, baseline);
  const notRun = results.filter((s) => s.status === 'skipped').length;
  if (notRun && verdicts.overall.exitCode === 0)
    verdicts.overall = {
      conforms: false,
      exitCode: 3,
      headline: `incomplete: ${notRun} case(s) untested (${stopped})`,
    };
  const sorted = canaryLatencies.map((l) => l.ms).sort((a, b) => a - b);
  const result: RunResult = {
    suite,
    role: 'robustness',
    profile,
    target: options.url,
    provisioning: provisioner.description,
    ...(options.expectedFailures ? { baselineFile: options.expectedFailures } : {}),
    startedAt,
    durationMs: budget.elapsedMs,
    hasClock: false,
    leftBehind,
    scenarios: results,
    ...verdicts,
    robustness: {
      seed,
      cases: cases.length,
      untested: notRun,
      ...(stopped ? { stopped } : {}),
      caps,
      used: { connections: budget.connections, bytes: budget.bytes, durationMs: budget.elapsedMs },
      canary: {
        latenciesMs: canaryLatencies,
        ...(sorted.length ? { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) } : {}),
      },
    },
  };
  if (sorted.length)
    console.log(
      `canary: ${sorted.length} answers, p50 ${result.robustness!.canary.p50Ms} ms, p99 ${result.robustness!.canary.p99Ms} ms`,
    );
  return helpers.finish(result, options);
}
