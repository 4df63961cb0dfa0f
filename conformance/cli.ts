// `bridge-conformance server --url ws://host:port/v1 …`: checks a running bridge it did not start (one node, or
// several nodes of one bridge: `--url A --url B` or `--url A,B`), in the protocol profile (default), the bridge
// profile or the resume profile (the resume extension); `bridge-conformance client --role app|agent --command …`
// plays the bridge for a client. Exit codes: 0 conforms, 1 a MUST failed, 2 the run could not start, 3 incomplete.
import { writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { readBaseline, type BaselineEntry } from './baseline.js';
import type { CommonOptions } from './options.js';
import { progress, summary } from './report/console.js';
import { html } from './report/html.js';
import { junit } from './report/junit.js';
import { judge, type RunResult, type ScenarioResult } from './results.js';
import type { RunContext } from './run-context.js';
import { runScenario } from './run.js';
import { CAP_DEFAULTS, robustness, type RobustnessOptions } from './robustness/run.js';
import { ANSWER_TIMEOUT_MS, ANSWER_WINDOW_MS, CONNECT_TIMEOUT_MS } from './client/run.js';
import { DEFAULT_JOBS, runClientScenarios } from './client/run-all.js';
import type { Outcome } from './outcome.js';
import { clientScenarios } from './client/scenarios.js';
import { addUrls, nodeList } from './nodes.js';
import { checkProvisioner, checkUrl, PreflightError, probeNodes } from './preflight.js';
import { AdminApiProvisioner } from './provision/admin-api.js';
import { CommandProvisioner } from './provision/command.js';
import { FixturesFileProvisioner, outsideLayout, readFixturesFile } from './provision/fixtures-file.js';
import { hasClock, type Provisioner } from './provision/provisioner.js';
import {
  actionsNeeded,
  clockTotalMs,
  EVERY_FRAME,
  inProfile,
  loadRequirements,
  loadScenarios,
  PROFILES,
  type Profile,
  type Requirement,
  type Scenario,
} from './scenario.js';
import { loadSettings, settingsNumber, type Settings } from './settings.js';
import { suiteLine, suiteVersion } from './suite-version.js';
import { Target } from './target.js';
import { VERSION, type ClientKind } from '../generated/index.js';

export type { CommonOptions } from './options.js';

export interface ServerOptions extends CommonOptions {
  /** One base URL, or several nodes of one bridge: a list, or URLs separated by commas (both may be mixed). */
  url: string | string[];
  adminUrl?: string;
  adminToken?: string;
  fixtures?: string;
  provision?: string;
  settings?: string;
  realTime: boolean;
  realTimeMax: number;
  timeoutMs: number;
}

const int = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a whole number of milliseconds`);
  return n;
};

/** `ws://host:port/v1` -> `http://host:port` (where /admin/v1 lives by default). */
export function defaultAdminUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol === 'wss:' ? 'https:' : 'http:'}//${u.host}`;
}

/**
 * The rules only one role judges: CLI-… the client role's (CLC-…: its rules of the cancel extension), ROB-…
 * robustness mode's; the rest the server role's.
 */
const ROLE_PREFIXES = { client: ['CLI-', 'CLC-'], robustness: ['ROB-'] } as const;

/** The registry of a role and profile. */
export function requirementsOf(role: 'server' | 'client' | 'robustness', profile: Profile): Requirement[] {
  const prefixes = Object.entries(ROLE_PREFIXES);
  const roleOf = (id: string) => prefixes.find(([, ps]) => ps.some((p) => id.startsWith(p)))?.[0] ?? 'server';
  return [...loadRequirements().values()].filter((r) => roleOf(r.id) === role && inProfile(r, profile));
}

/** Scenarios whose id, title or one of whose requirements matches `--grep`, and none of them `--exclude`. */
function selected<T extends { id: string; title: string; requirements: string[] }>(
  all: T[],
  options: Pick<CommonOptions, 'grep' | 'exclude'>,
): T[] {
  const matches = (re: RegExp, s: T) => [s.id, s.title, ...s.requirements].some((text) => re.test(text));
  const grep = options.grep ? new RegExp(options.grep, 'i') : undefined;
  const exclude = options.exclude ? new RegExp(options.exclude, 'i') : undefined;
  return all.filter((s) => (!grep || matches(grep, s)) && !(exclude && matches(exclude, s)));
}

/** Prints what did not pass and the summary, writes the reports; returns the exit code. */
function finish(result: RunResult, options: CommonOptions): number {
  for (const line of summary(result, options.expectedFailures)) console.log(line);
  if (options.reportJson) writeFileSync(options.reportJson, `${JSON.stringify(result, null, 2)}\n`);
  if (options.junit) writeFileSync(options.junit, junit(result));
  if (options.html) writeFileSync(options.html, html(result));
  return result.overall.exitCode;
}

/** The baseline file's entries; a line that is no entry stops the run before it starts (exit 2). */
function baselineOf(options: CommonOptions): BaselineEntry[] {
  try {
    return readBaseline(options.expectedFailures);
  } catch (err) {
    throw new PreflightError((err as Error).message);
  }
}

/** Whether a scenario run checks the requirement, or failed it (a barrier's rule, which it does not list). */
const concerns = (results: ScenarioResult[], id: string) =>
  results.some((s) => s.requirements.includes(id) || s.failedRequirements?.includes(id));

/** What a scenario needs, for --list: the provisioning actions, clock time, settings, and whether a fixtures file serves it. */
function needs(s: Scenario, settings: Settings): string {
  const actions = [...actionsNeeded(s.steps)];
  const parts: string[] = actions.map((a) => `provisioning: ${a}`);
  const clock = clockTotalMs(s.steps, settingsNumber(settings));
  if (clock) parts.push(`test clock: ${clock} ms`);
  if (s.settings.length) parts.push(`settings: ${s.settings.join(', ')}`);
  const outside = outsideLayout(s.fixtures);
  parts.push(
    outside ? 'fixtures file: no, its own registrations' : actions.length ? 'fixtures file: no' : 'fixtures file: yes',
  );
  return parts.join('; ');
}

/** The admin API (and with it the test clock, which the cluster moves on every node) is the first node's. */
function provisionerFor(options: ServerOptions, target: Target, firstNode: string): Provisioner {
  const adminToken = options.adminToken ?? process.env.ADMIN_TOKEN;
  const admin = adminToken
    ? new AdminApiProvisioner(target, (options.adminUrl ?? defaultAdminUrl(firstNode)).replace(/\/$/, ''), adminToken)
    : undefined;
  if (options.provision) return new CommandProvisioner(options.provision);
  if (options.fixtures) return new FixturesFileProvisioner(readFixturesFile(options.fixtures), options.fixtures, admin);
  if (admin) return admin;
  throw new PreflightError(
    'nothing to provision with: give --admin-token (or ADMIN_TOKEN) for our admin API, --provision "CMD" for your own, or --fixtures FILE',
  );
}

async function serverRun(options: ServerOptions): Promise<number> {
  const profile = options.profile;
  const baseline = baselineOf(options);
  const registry = loadRequirements();
  const all = loadScenarios(registry);
  const scenarios = selected(all, options).filter((s) =>
    s.requirements.some((id) => !EVERY_FRAME.has(id) && inProfile(registry.get(id)!, profile)),
  );
  const settings = loadSettings(options.settings);
  if (options.list) {
    for (const s of scenarios)
      console.log(
        `${s.id.padEnd(42)} ${s.requirements
          .filter((id) => inProfile(registry.get(id)!, profile))
          .join(',')
          .padEnd(34)} ${needs(s, settings.values)}`,
      );
    return 0;
  }
  const nodes = nodeList(options.url);
  nodes.forEach(checkUrl);
  await probeNodes(nodes, options.timeoutMs * 3);
  const target = new Target({ timeoutMs: options.timeoutMs });
  const provisioner = provisionerFor(options, target, nodes[0]!);
  await checkProvisioner(provisioner);
  const clock = await hasClock(provisioner);
  const suite = suiteVersion(registry);
  console.log(suiteLine(suite));
  const against = nodes.length > 1 ? `${nodes.length} nodes of one bridge (${nodes.join(', ')})` : nodes[0];
  console.log(
    `bridge-conformance: ${scenarios.length} scenarios, ${profile} profile, against ${against}; provisioning: ${provisioner.description}; test clock ${clock ? 'on' : 'off'}${settings.file ? `; settings ${settings.file}` : ''}`,
  );

  const ctx: RunContext = {
    target,
    nodes,
    provisioner,
    profile,
    requirements: registry,
    settings: settings.values,
    hasClock: clock,
    realTime: options.realTime,
    realTimeMaxMs: options.realTimeMax,
    timeoutMs: options.timeoutMs,
    unsupported: new Map(),
    createdOrgs: [],
  };
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const results: ScenarioResult[] = [];
  for (const s of scenarios) {
    // Numbered among the scenarios of its kind: the extension's added no node moves for the others (nodes.ts).
    const outcome = await runScenario(s, ctx, all.filter((x) => x.extension === s.extension).indexOf(s));
    results.push({ id: s.id, file: s.file, title: s.title, requirements: s.requirements, ...outcome });
    console.log(progress(results[results.length - 1]!));
  }
  const leftBehind = await cleanup(provisioner, ctx.createdOrgs);
  const judged = requirementsOf('server', profile).filter(
    (r) => (!options.grep && !options.exclude) || concerns(results, r.id),
  );
  const verdicts = judge(judged, results, baseline);
  const result: RunResult = {
    suite,
    role: 'server',
    profile,
    target: nodes.join(', '),
    ...(nodes.length > 1 ? { nodes } : {}),
    provisioning: provisioner.description,
    settings: settings.values,
    ...(settings.file ? { settingsFile: settings.file } : {}),
    ...(options.expectedFailures ? { baselineFile: options.expectedFailures } : {}),
    startedAt,
    durationMs: Math.round(performance.now() - started),
    hasClock: clock,
    leftBehind,
    scenarios: results,
    ...verdicts,
  };
  return finish(result, options);
}

/** Removes the organizations the run created; returns those it could not. */
async function cleanup(provisioner: Provisioner, orgIds: string[]): Promise<string[]> {
  if (!orgIds.length) return [];
  try {
    await provisioner.cleanup(orgIds);
    console.log(`clean-up: removed ${orgIds.length} organization(s) the run created`);
    return [];
  } catch (err) {
    console.log(`clean-up failed: ${(err as Error).message}`);
    return orgIds;
  }
}

/** `server`, with a preflight problem turned into one line and exit 2. */
export async function server(options: ServerOptions): Promise<number> {
  try {
    return await serverRun(options);
  } catch (err) {
    if (!(err instanceof PreflightError)) throw err;
    console.error(`bridge-conformance: ${(err as Error).message}`);
    return 2;
  }
}

export interface ClientOptions extends CommonOptions {
  role: ClientKind;
  command: string;
  /** Accepted for old command lines; every scenario runs now, slow ones included (--time-scale makes them fast). */
  slow?: boolean;
  connectTimeoutMs: number;
  /** Defaults (also for callers from code): DEFAULT_JOBS, 1, ANSWER_WINDOW_MS, ANSWER_TIMEOUT_MS. */
  jobs?: number;
  timeScale?: number;
  answerWindowMs?: number;
  answerTimeoutMs?: number;
}

/**
 * `bridge-conformance client --role app|agent --command "<cmd>"`: plays the bridge. For each client scenario of the
 * role it starts a mock bridge, runs the command with BRIDGE_URL, BRIDGE_TOKEN and BRIDGE_SCENARIO, and judges what
 * the client sends. Same output, reports and exit code as `server`.
 */
export async function client(options: ClientOptions): Promise<number> {
  if (options.profile === 'resume') {
    // The resume extension's client side (the SDK, R9) has no scenarios of the client role yet.
    console.error(
      `bridge-conformance: the ${options.profile} profile has no client scenarios; use --profile protocol, bridge or cancel`,
    );
    return 2;
  }
  let baseline: BaselineEntry[];
  try {
    baseline = baselineOf(options);
  } catch (err) {
    console.error(`bridge-conformance: ${(err as Error).message}`);
    return 2;
  }
  const registry = loadRequirements();
  const scenarios = selected(clientScenarios(options.role, options.profile, registry), options);
  if (options.list) {
    for (const s of scenarios)
      console.log(`${s.id.padEnd(40)} ${s.requirements.join(',').padEnd(30)} ${s.title}${s.slow ? ' (slow)' : ''}`);
    return 0;
  }
  const target = `${options.role} client: ${options.command}`;
  const suite = suiteVersion(registry);
  console.log(suiteLine(suite));
  console.log(`bridge-conformance: ${scenarios.length} client scenarios for the ${target}`);
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const asResult = (s: (typeof scenarios)[number], outcome: Outcome): ScenarioResult => ({
    id: s.id,
    file: 'client/scenarios.ts',
    title: s.title,
    requirements: s.requirements,
    ...outcome,
  });
  const outcomes = await runClientScenarios(
    scenarios,
    {
      command: options.command,
      connectTimeoutMs: options.connectTimeoutMs,
      profile: options.profile,
      timeScale: options.timeScale,
      answerWindowMs: options.answerWindowMs,
      answerTimeoutMs: options.answerTimeoutMs,
    },
    options.jobs ?? DEFAULT_JOBS,
    (s, outcome) => {
      console.log(progress(asResult(s, outcome)));
    },
  );
  const results = scenarios.map((s, i) => asResult(s, outcomes[i]!));
  // Only the requirements this role's scenarios can check: the other role's are not "untested" here.
  const mine = requirementsOf('client', options.profile).filter((r) => concerns(results, r.id));
  const verdicts = judge(mine, results, baseline);
  const result: RunResult = {
    suite,
    role: 'client',
    profile: options.profile,
    target,
    startedAt,
    durationMs: Math.round(performance.now() - started),
    hasClock: false,
    scenarios: results,
    ...verdicts,
  };
  return finish(result, options);
}

/**
 * The client role's time scale: 1 to 20. Beyond 20 the first backoff delay (1 s / K) is under 50 ms, where a
 * machine's scheduling blurs "backs off" and "retries at once".
 */
const timeScaleOption = (v: string): number => {
  const k = Number(v);
  if (!Number.isFinite(k) || k < 1 || k > 20)
    throw new InvalidArgumentError('--time-scale must be a number from 1 to 20');
  return k;
};

const jobsOption = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('--jobs must be a whole number from 1');
  return n;
};

const profileOption = (v: string): Profile => {
  if (!(PROFILES as readonly string[]).includes(v))
    throw new InvalidArgumentError(`--profile must be one of ${PROFILES.join(', ')}`);
  return v as Profile;
};

/** The options every role shares: profile, selection and reports. */
function commonOptions(cmd: Command): Command {
  return cmd
    .option(
      '--profile <profile>',
      "protocol: the protocol only; bridge: also this implementation's decisions; resume, cancel: that extension alone (resume: server role only)",
      profileOption,
      'protocol',
    )
    .option('--grep <regexp>', 'only scenarios whose id, title or requirements match')
    .option('--exclude <regexp>', 'leave out scenarios whose id, title or requirements match (after --grep)')
    .option('--list', 'print the scenarios with what each needs, and exit', false)
    .option('--report-json <file>', 'write the full result as JSON')
    .option('--junit <file>', 'write JUnit XML (one test case per requirement)')
    .option('--html <file>', 'write a self-contained HTML report')
    .option(
      '--expected-failures <file>',
      'baseline: known failures, one per line (REQ-001, REQ-001@scenario, REQ-001@scenario#step); waived while they fail, and the run fails when one passes',
    );
}

export function program(): Command {
  const cmd = new Command('bridge-conformance')
    .description('Checks a bridge, or a client, against the agent messaging bridge protocol.')
    .version(VERSION, '-V, --version', "print the suite's version and exit");
  const serverCmd = cmd
    .command('server')
    .description('run the scenarios against a running bridge')
    .requiredOption(
      '--url <url>',
      'the bridge base URL, ending in /v1, e.g. ws://127.0.0.1:8080/v1; for several nodes of one bridge repeat it or separate URLs by commas',
      addUrls,
    )
    .option('--settings <file>', "the target's settings (YAML or JSON; spec/conformance.yaml TargetSettings)")
    .option('--provision <cmd>', 'provision through this command (JSON request on stdin, JSON answer on stdout)')
    .option('--admin-url <url>', 'HTTP base of our admin API (default: the host of the first --url)')
    .option('--admin-token <token>', 'admin token of our admin API (default: env ADMIN_TOKEN)')
    .option('--fixtures <file>', 'pre-provisioned apps and agents (YAML or JSON) in the fixtures layout')
    .option('--real-time', 'without a test clock, run scenarios that move time by waiting', false)
    .option('--real-time-max <ms>', 'longest wait --real-time accepts', int('--real-time-max'), 20_000)
    .option('--timeout-ms <ms>', 'how long to wait for each expected frame', int('--timeout-ms'), 3_000);
  commonOptions(serverCmd).action(async (opts: ServerOptions) => {
    process.exitCode = await server(opts);
  });
  const clientCmd = cmd
    .command('client')
    .description('play the bridge: run a client command against a mock bridge and judge what it sends')
    .requiredOption('--role <role>', 'app or agent', (v: string) => {
      if (v !== 'app' && v !== 'agent') throw new InvalidArgumentError('--role must be app or agent');
      return v;
    })
    .requiredOption(
      '--command <cmd>',
      'the client to run (a shell command line); it gets BRIDGE_URL, BRIDGE_TOKEN and BRIDGE_SCENARIO',
    )
    .option('--slow', 'accepted for old command lines: every scenario runs, slow ones included')
    .option(
      '--time-scale <k>',
      "BRIDGE_TIME_SCALE for the client: the protocol's heartbeat and backoff run K times faster (1 to 20)",
      timeScaleOption,
      1,
    )
    .option('--jobs <n>', 'scenarios run at once', jobsOption, DEFAULT_JOBS)
    .option(
      '--answer-window-ms <ms>',
      "an agent's answer later than this is slow (a warning)",
      int('--answer-window-ms'),
      ANSWER_WINDOW_MS,
    )
    .option(
      '--answer-timeout-ms <ms>',
      'an agent with no answer by then is silent (a failure)',
      int('--answer-timeout-ms'),
      ANSWER_TIMEOUT_MS,
    )
    .option(
      '--connect-timeout-ms <ms>',
      'how long the client may take to start and connect',
      int('--connect-timeout-ms'),
      CONNECT_TIMEOUT_MS,
    );
  commonOptions(clientCmd).action(async (opts: ClientOptions) => {
    process.exitCode = await client(opts);
  });
  const robustnessCmd = cmd
    .command('robustness')
    .description('a seeded campaign of hostile input against a running bridge (loopback only unless you own it)')
    .requiredOption('--url <url>', 'the bridge base URL, ending in /v1, e.g. ws://127.0.0.1:8080/v1')
    .option('--provision <cmd>', 'provision through this command (JSON request on stdin, JSON answer on stdout)')
    .option('--admin-url <url>', 'HTTP base of our admin API (default: the host of --url)')
    .option('--admin-token <token>', 'admin token of our admin API (default: env ADMIN_TOKEN)')
    .option('--seed <n>', 'the seed of the cases (default: a random one, printed first)', int('--seed'))
    .option('--cases <n>', "how many cases to generate (default: the generator's)", int('--cases'))
    .option(
      '--scale <scale>',
      'how much the resource cases hold: quick (seconds each) or full (a benchmark-style run; raise the caps)',
      (v: string) => {
        if (v !== 'quick' && v !== 'full') throw new InvalidArgumentError('--scale is quick or full');
        return v;
      },
      'quick',
    )
    .option('--canary-ms <ms>', "how long the canary's event may take after each case", int('--canary-ms'), 2_000)
    .option('--timeout-ms <ms>', 'how long to wait for each expected frame', int('--timeout-ms'), 3_000)
    .option(
      '--max-connections <n>',
      'cap: connections the run opens',
      int('--max-connections'),
      CAP_DEFAULTS.maxConnections,
    )
    .option('--max-bytes <n>', 'cap: bytes the run sends', int('--max-bytes'), CAP_DEFAULTS.maxBytes)
    .option(
      '--max-duration-ms <ms>',
      'cap: how long the run takes',
      int('--max-duration-ms'),
      CAP_DEFAULTS.maxDurationMs,
    )
    .option('--i-own-this-target', 'allow a target that is not on loopback', false);
  commonOptions(robustnessCmd).action(async (opts: RobustnessOptions) => {
    process.exitCode = await robustness(opts, robustnessHelpers);
  });
  return cmd;
}

/** What the robustness command borrows from the other roles: provisioning, selection, baseline, reports. */
export const robustnessHelpers = {
  provisionerFor: (o: RobustnessOptions, target: Target, firstNode: string) =>
    provisionerFor({ ...o, realTime: false, realTimeMax: 0 }, target, firstNode),
  selected,
  baselineOf,
  finish,
  requirementsOf,
};
