// `bridge-conformance robustness --url ws://host:port/v1 …`: a seeded campaign of hostile input (cases.ts) against
// any bridge. Each case is one scenario result: what it sent, what it expected, what came; its requirements are the
// case's own (the generator names them), ERR-010 or AGT-009 (the sender's connection still answers ping) and ROB-001
// (another organization, the canary, is still served). The verdict goes through judge() like the other roles'. This
// file is the run: options, provisioning, the loop, the report; one case is judge-case.ts, the canary canary.ts, the
// connections connections.ts, the loopback check and caps safety.ts.
import { randomInt } from 'node:crypto';
import type { CommonOptions } from '../options.js';
import { checkProvisioner, checkUrl, PreflightError, probeNodes } from '../preflight.js';
import type { Provisioner } from '../provision/provisioner.js';
import type { RunResult, ScenarioResult } from '../results.js';
import { judge } from '../results.js';
import { inProfile, loadRequirements, type Profile, type Requirement } from '../scenario.js';
import { suiteLine, suiteVersion } from '../suite-version.js';
import { Target } from '../target.js';
import { progress } from '../report/console.js';
import { percentile } from './canary.js';
import type { InputCase } from './cases.js';
import { Connections, type Fixture } from './connections.js';
import { CANARY, expectationOf, runCase, titleOf, untested, type CaseContext } from './judge-case.js';
import { RESOURCE_CASES, resourceTitle, runResourceCase, UNDER_LOAD, untestedResource } from './resources/run.js';
import type { ResourceCase, Scale } from './resources/types.js';
import { Budget, checkLoopback } from './safety.js';

export { CAP_DEFAULTS, checkLoopback } from './safety.js';

export interface RobustnessOptions extends CommonOptions {
  url: string;
  adminUrl?: string;
  adminToken?: string;
  provision?: string;
  seed?: number;
  cases?: number;
  scale: Scale;
  canaryMs: number;
  timeoutMs: number;
  iOwnThisTarget?: boolean;
  maxConnections: number;
  maxBytes: number;
  maxDurationMs: number;
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
  const { cases, left } = await casesOf(seed, options, helpers, registry);
  const resources = helpers.selected(
    RESOURCE_CASES.map((c) => ({ ...c, title: resourceTitle(c), requirements: [UNDER_LOAD, CANARY] })),
    options,
  );
  if (options.list) {
    for (const c of cases)
      console.log(`${c.id.padEnd(28)} ${c.endpoint.padEnd(6)} ${c.requirements[0]!.padEnd(9)} ${c.title}`);
    for (const c of resources) console.log(`${c.id.padEnd(28)} ${'-'.padEnd(6)} ${UNDER_LOAD.padEnd(9)} ${c.title}`);
    return 0;
  }
  const caps = { connections: options.maxConnections, bytes: options.maxBytes, durationMs: options.maxDurationMs };
  console.log(
    `caps: at most ${caps.connections} connections, ${caps.bytes} bytes sent, ${caps.durationMs} ms (--max-connections, --max-bytes, --max-duration-ms)`,
  );
  await probeNodes([options.url], options.timeoutMs * 3);
  const provisioner = helpers.provisionerFor(options, new Target({ timeoutMs: options.timeoutMs }), options.url);
  await checkProvisioner(provisioner);
  const suite = suiteVersion(registry);
  console.log(suiteLine(suite));
  console.log(
    `bridge-conformance: ${cases.length} robustness cases and ${resources.length} resource cases (scale ${options.scale}), ${profile} profile${left ? ` (${left} decision cases need --profile bridge)` : ''}, against ${options.url}; provisioning: ${provisioner.description}`,
  );

  const budget = new Budget(options);
  const startedAt = new Date().toISOString();
  const { fixtures, createdOrgs } = await provisionPairs(provisioner);
  const conns = new Connections({ url: options.url, timeoutMs: options.timeoutMs, profile }, budget);
  const ran = await runCases(cases, { seed, profile, options, conns, budget, fixtures, caseNumber: 0 });
  await runResources(resources, ran, {
    seed,
    scale: options.scale,
    options,
    conns,
    budget,
    fixtures,
    provisioner,
    createdOrgs,
  });
  conns.closeAll();
  const leftBehind = await cleanUp(provisioner, createdOrgs, ran.stopped);
  if (ran.stopped) console.log(`bridge-conformance: the run stopped: ${ran.stopped}`);

  const named = new Set(ran.results.flatMap((r) => r.requirements));
  const judged = [
    ...[...registry.values()].filter((r) => named.has(r.id) && !r.id.startsWith('ROB-') && inProfile(r, profile)),
    // ROB-002 only where resource cases ran: leaving them out (--exclude resource.) leaves nothing untested.
    ...helpers.requirementsOf('robustness', profile).filter((r) => named.has(r.id)),
  ];
  const verdicts = judge(judged, ran.results, baseline);
  const notRun = ran.results.filter((r) => r.status === 'skipped' && r.reason?.startsWith('not run:')).length;
  // Untested cases never let a run pass: judge() sees only the requirements, which other cases may have passed.
  if (notRun && verdicts.overall.exitCode === 0)
    verdicts.overall = {
      conforms: false,
      exitCode: 3,
      headline: `incomplete: ${notRun} case(s) untested (${ran.stopped})`,
    };
  const sorted = ran.latencies.map((l) => l.ms).sort((a, b) => a - b);
  const canaryFigures = sorted.length ? { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) } : {};
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
    scenarios: ran.results,
    ...verdicts,
    robustness: {
      seed,
      scale: options.scale,
      cases: cases.length,
      untested: notRun,
      ...(ran.stopped ? { stopped: ran.stopped } : {}),
      caps,
      used: { connections: budget.connections, bytes: budget.bytes, durationMs: budget.elapsedMs },
      canary: { latenciesMs: ran.latencies, ...canaryFigures },
    },
  };
  if (sorted.length)
    console.log(`canary: ${sorted.length} answers, p50 ${canaryFigures.p50Ms} ms, p99 ${canaryFigures.p99Ms} ms`);
  return helpers.finish(result, options);
}

/** The run's cases: generated from the seed, checked against the registry, kept to the profile, then selected. */
async function casesOf(
  seed: number,
  options: RobustnessOptions,
  helpers: RobustnessHelpers,
  registry: Map<string, Requirement>,
) {
  const generate = helpers.generate ?? (await import('./cases.js')).generateCases;
  const generated = generate({ seed, ...(options.cases ? { cases: options.cases } : {}) });
  for (const c of generated)
    for (const e of [c.expect, ...(c.ours ? [c.ours] : [])])
      if (!registry.has(e.requirement))
        throw new PreflightError(`case ${c.id} names ${e.requirement}, not a requirement`);
  const inScope = generated.filter((c) => c.source === 'protocol' || options.profile === 'bridge');
  const cases = helpers.selected(
    inScope.map((c) => ({ ...c, title: titleOf(c), requirements: [expectationOf(c, options.profile).requirement] })),
    options,
  );
  return { cases, left: generated.length - inScope.length };
}

/** Org1's app and agent (the target pair) and org2's (the canary, another organization), provisioned once. */
async function provisionPairs(provisioner: Provisioner) {
  const created = await provisioner.create(
    {
      orgs: ['org1', 'org2'],
      apps: { app1: 'org1', app2: 'org2' },
      agents: { agent1: { org: 'org1' }, agent2: { org: 'org2' } },
    },
    'robustness',
  );
  const pair = (app: string, agent: string): Fixture => ({
    appId: created.apps[app]!.app_id,
    appToken: created.apps[app]!.token,
    agentId: created.agents[agent]!.agent_id,
    agentToken: created.agents[agent]!.token,
  });
  return {
    fixtures: { target: pair('app1', 'agent1'), canary: pair('app2', 'agent2') },
    createdOrgs: provisioner.createsRegistrations ? Object.values(created.orgs).map((o) => o.org_id) : [],
  };
}

/** Every case in order; once the run stops (a cap, the target gone) the rest are reported untested. */
async function runCases(cases: InputCase[], ctx: CaseContext) {
  const latencies: { case: string; ms: number }[] = [];
  const results: ScenarioResult[] = [];
  let stopped: string | undefined;
  for (const [i, c] of cases.entries()) {
    if (stopped) {
      results.push(untested(c, ctx.profile, stopped));
      continue;
    }
    const ran = await runCase(c, { ...ctx, caseNumber: i + 1 });
    results.push(ran.result);
    if (ran.latencyMs !== undefined) latencies.push({ case: c.id, ms: ran.latencyMs });
    stopped = ran.stopped;
    if (ran.crashed) console.log(`bridge-conformance: ${stopped}; the remaining cases are untested`);
  }
  return { results, latencies, stopped };
}

/** The resource cases after the input cases, unless the run stopped; their results and canary latencies join. */
async function runResources(
  resources: ResourceCase[],
  ran: Awaited<ReturnType<typeof runCases>>,
  ctx: Parameters<typeof runResourceCase>[1],
): Promise<void> {
  for (const c of resources) {
    if (ran.stopped) {
      ran.results.push(untestedResource(c, ran.stopped));
      continue;
    }
    const done = await runResourceCase(c, ctx);
    ran.results.push(done.result);
    console.log(progress(done.result)); // a few cases, each with what it observed: said as they end
    if (done.latencyMs !== undefined) ran.latencies.push({ case: c.id, ms: done.latencyMs });
    ran.stopped = done.stopped;
    if (done.crashed) console.log(`bridge-conformance: ${done.stopped}; the remaining cases are untested`);
  }
}

/** Removes what the run created, unless the target is gone; returns what is left behind. */
async function cleanUp(provisioner: Provisioner, orgs: string[], stopped: string | undefined): Promise<string[]> {
  if (!orgs.length) return [];
  if (stopped?.startsWith('the target stopped')) return orgs;
  try {
    await provisioner.cleanup(orgs);
    return [];
  } catch {
    return orgs;
  }
}
