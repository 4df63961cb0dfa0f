// One resource case, run and judged: what it holds (resources/*.ts), the canary during the load and the target
// answering after it (ROB-002), the canary after it (ROB-001); what the bridge did is the case's informational
// result. A target that stops answering is reported as a crash, with the case and the seed.
import type { FixtureSet, ReportObservation } from '../../../generated/index.js';
import { Transcript } from '../../actor.js';
import type { Provisioner } from '../../provision/provisioner.js';
import type { ScenarioResult } from '../../results.js';
import { canary } from '../canary.js';
import { CANARY, type CaseContext, type CaseRun } from '../judge-case.js';
import { CapReached, targetAlive } from '../safety.js';
import { manyConnections } from './connections.js';
import { largeDirectory } from './directory.js';
import { eventFlood } from './event-flood.js';
import { unfinishedFrames } from './frames.js';
import { resumeFlood } from './resume-flood.js';
import { stalledReader } from './stalled-reader.js';
import { NotApplicable, SCALES, sleep, type ResourceCase, type ResourceContext, type Scale } from './types.js';
import { unfinishedUpgrades } from './upgrades.js';

export const RESOURCE_CASES: readonly ResourceCase[] = [
  manyConnections,
  unfinishedUpgrades,
  unfinishedFrames,
  stalledReader,
  eventFlood,
  resumeFlood,
  largeDirectory,
];

/** The target serves another organization during the load and answers after it. */
export const UNDER_LOAD = 'ROB-002';
const REQUIREMENTS = [UNDER_LOAD, CANARY];
const FILE = 'robustness/resources';

/** An input case's context (its seed, the run's connections, budget and fixtures), and what resource cases add. */
export type ResourceRunContext = Omit<CaseContext, 'profile' | 'caseNumber'> & {
  scale: Scale;
  provisioner: Provisioner;
  /** Organizations registered by the cases, for the run's clean-up. */
  createdOrgs: string[];
};

export const resourceTitle = (c: ResourceCase) => `[resource] ${c.title}`;

export const untestedResource = (c: ResourceCase, why: string): ScenarioResult => ({
  id: c.id,
  file: FILE,
  title: resourceTitle(c),
  requirements: REQUIREMENTS,
  status: 'skipped',
  reason: `not run: ${why}`,
  durationMs: 0,
  transcript: [],
});

/** How long a case may take at most, whatever the target does: its hold, its set-up and its answers. */
const boundMs = (ctx: ResourceRunContext) => 3 * SCALES[ctx.scale].holdMs + 20 * ctx.options.timeoutMs;

export async function runResourceCase(c: ResourceCase, ctx: ResourceRunContext): Promise<CaseRun> {
  const transcript = new Transcript();
  ctx.conns.transcript.current = transcript;
  const note = (text: string) => transcript.add('suite', 'note', text);
  const observed: ReportObservation[] = [];
  const failures: string[] = [];
  const held: (() => void)[] = [];
  const probes: Promise<void>[] = [];
  const started = performance.now();
  let probed = 0;
  note(`resource case ${c.id} (seed ${ctx.seed}, scale ${ctx.scale}): ${c.title}`);
  const context: ResourceContext = {
    url: ctx.options.url,
    timeoutMs: ctx.options.timeoutMs,
    amounts: SCALES[ctx.scale],
    budget: ctx.budget,
    target: ctx.fixtures.target,
    note,
    observe: (what, value) => {
      observed.push({ what, value });
      note(`observed: ${what}: ${value}`);
    },
    probe: () => {
      const p = canary(ctx.conns, ctx.fixtures.canary, c.id, { ...ctx.options, fresh: true }).then(
        (r) => {
          probed++;
          if (typeof r === 'number') context.observe('canary during the load (ms)', r);
          else failures.push(`during the load: ${r}`);
        },
        (err: Error) => void failures.push(`during the load: the canary could not be run: ${err.message}`),
      );
      probes.push(p);
      return p;
    },
    hold: (release) => void held.push(release),
    provision: async (fixtures: FixtureSet) => {
      const created = await ctx.provisioner.create(fixtures, c.id);
      if (ctx.provisioner.createsRegistrations)
        ctx.createdOrgs.push(...Object.values(created.orgs).map((o) => o.org_id));
      return created;
    },
  };
  ctx.conns.release(['app1', 'agent1'], 'the resource case holds the target pair itself');
  let setup: string | undefined;
  try {
    ctx.budget.time();
    await withBound(c.run(context), boundMs(ctx), `the case did not end within ${boundMs(ctx)} ms`);
  } catch (err) {
    if (err instanceof CapReached) {
      release(held);
      const stopped = `${err.message} (during case ${c.id})`;
      return { result: { ...untestedResource(c, stopped), transcript: transcript.lines }, stopped };
    }
    if (err instanceof NotApplicable) {
      release(held);
      note(`not applicable: ${err.message}`);
      const result = { ...untestedResource(c, err.message), reason: err.message, transcript: transcript.lines };
      return { result };
    }
    setup = (err as Error).message;
    note(`stopped: ${setup}`);
  } finally {
    await Promise.all(probes);
  }
  release(held);
  await sleep(200); // the target sees the sockets go
  return ending(c, ctx, { transcript, observed, failures, setup, probed, started });
}

function release(held: (() => void)[]): void {
  for (const r of held.splice(0).reverse()) r();
}

function withBound<T>(p: Promise<T>, ms: number, why: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(why)), ms)));
  return Promise.race([p, bound]).finally(() => clearTimeout(timer));
}

interface Gathered {
  transcript: Transcript;
  observed: ReportObservation[];
  failures: string[];
  setup: string | undefined;
  probed: number;
  started: number;
}

/** The target after the case (a crash stops the run), the canary after it, and the case's result. */
async function ending(c: ResourceCase, ctx: ResourceRunContext, g: Gathered): Promise<CaseRun> {
  const failures = g.failures.map((reason) => ({ requirements: [UNDER_LOAD], reason }));
  const checked: string[] = [];
  let latencyMs: number | undefined;
  let stopped: string | undefined;
  if (!(await targetAlive(ctx.options.url, ctx.options.timeoutMs, ctx.budget).catch(() => false))) {
    stopped = `the target stopped answering after this case (seed ${ctx.seed}, case ${c.id})`;
    failures.push({ requirements: [UNDER_LOAD, CANARY], reason: stopped });
  } else {
    if (g.probed && !g.failures.length) checked.push(UNDER_LOAD);
    const after = await canary(ctx.conns, ctx.fixtures.canary, c.id, ctx.options).catch((e: Error) => e.message);
    if (typeof after === 'number') {
      latencyMs = after;
      g.transcript.add('suite', 'note', `canary answered in ${after} ms after the case`);
      checked.push(CANARY);
    } else failures.push({ requirements: [CANARY], reason: `after the case: ${after}` });
  }
  const failed = [...new Set(failures.flatMap((f) => f.requirements))];
  const result: ScenarioResult = {
    id: c.id,
    file: FILE,
    title: resourceTitle(c),
    requirements: REQUIREMENTS,
    status: failures.length ? 'failed' : g.setup ? 'errored' : 'passed',
    ...(failures.length
      ? { reason: failures[0]!.reason, failures, failedRequirements: failed }
      : g.setup
        ? { reason: g.setup, stop: { reason: g.setup } }
        : {}),
    checked: checked.filter((id) => !failed.includes(id)),
    informational: g.observed,
    durationMs: Math.round(performance.now() - g.started),
    transcript: g.transcript.lines,
  };
  return {
    result,
    ...(latencyMs === undefined ? {} : { latencyMs }),
    ...(stopped ? { stopped, crashed: true } : {}),
  };
}
