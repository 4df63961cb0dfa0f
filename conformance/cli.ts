// `bridge-conformance server --url ws://host:port/v1 --admin-token T`: runs every scenario against a bridge it
// did not start, prints a line per scenario and a summary, writes the reports, and exits 0 only when no MUST
// requirement failed.
import { readFileSync, writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { parse } from 'yaml';
import { html } from './report/html.js';
import { junit } from './report/junit.js';
import { judge, type RunResult, type ScenarioResult } from './results.js';
import { runScenario, type FixtureFile } from './run.js';
import { runClientScenario } from './client/run.js';
import { CLIENT_SCENARIOS } from './client/scenarios.js';
import { loadRequirements, loadScenarios, type Requirement } from './scenario.js';
import { Target } from './target.js';

interface ServerOptions extends CommonOptions {
  url: string;
  adminUrl?: string;
  adminToken?: string;
  fixtures?: string;
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

function readExpectedFailures(file: string | undefined): Set<string> {
  if (!file) return new Set();
  const text = readFileSync(file, 'utf8');
  // One requirement ID per line (a # starts a comment), or a YAML list.
  const ids = text
    .split('\n')
    .map((l) => l.replace(/#.*/, '').replace(/^\s*-\s*/, '').trim())
    .filter(Boolean);
  return new Set(ids);
}

/** The registry split by role: CLI-… requirements are the client role's, the rest the server role's. */
function requirementsOf(role: 'server' | 'client'): Map<string, Requirement> {
  return new Map([...loadRequirements()].filter(([id]) => id.startsWith('CLI-') === (role === 'client')));
}

/** Scenarios whose id, title or one of whose requirements matches `--grep`. */
function selected<T extends { id: string; title: string; requirements: string[] }>(all: T[], grep: string | undefined): T[] {
  const re = grep ? new RegExp(grep, 'i') : undefined;
  return all.filter((s) => !re || [s.id, s.title, ...s.requirements].some((text) => re.test(text)));
}

/** The line printed as each scenario ends. */
function progress(s: { id: string; requirements: string[] }, outcome: ScenarioResult): void {
  const mark = outcome.status === 'passed' ? 'ok  ' : outcome.status === 'failed' ? 'FAIL' : 'skip';
  console.log(`${mark} ${s.id} [${s.requirements.join(', ')}] ${outcome.durationMs} ms${outcome.reason ? ` — ${outcome.status === 'failed' ? `step ${outcome.failedStep}: ` : ''}${outcome.reason}` : ''}`);
}

interface ReportOptions {
  reportJson?: string;
  junit?: string;
  html?: string;
  expectedFailures?: string;
}

interface CommonOptions extends ReportOptions {
  grep?: string;
  list: boolean;
}

/** Prints the requirement verdicts and the summary line, writes the reports; the exit code: 0 when no MUST failed. */
function finish(result: RunResult, options: ReportOptions, showUntested: boolean): number {
  const by = (v: string) => result.requirements.filter((r) => r.verdict === v);
  for (const r of by('failed')) console.log(`requirement FAILED: ${r.id} (${r.level}) ${r.text}`);
  for (const r of by('expected-failure')) console.log(`requirement failed as expected: ${r.id} (${r.level})`);
  for (const r of by('unexpectedly-passing')) console.log(`requirement listed as an expected failure now PASSES: ${r.id} — remove it from ${options.expectedFailures}`);
  const untested = by('untested');
  if (untested.length) console.log(`requirements no scenario checks: ${untested.map((r) => r.id).join(', ')}`);
  const untestedCount = showUntested ? `, ${untested.length} untested` : '';
  console.log(`requirements: ${by('passed').length} passed, ${by('failed').length} failed, ${by('skipped').length} skipped${untestedCount} (MUST failed: ${result.failedByLevel.MUST})`);
  if (options.reportJson) writeFileSync(options.reportJson, `${JSON.stringify(result, null, 2)}\n`);
  if (options.junit) writeFileSync(options.junit, junit(result));
  if (options.html) writeFileSync(options.html, html(result));
  console.log(`${result.counts.passed} passed, ${result.counts.failed} failed, ${result.counts.skipped} skipped`);
  return result.failedByLevel.MUST === 0 ? 0 : 1;
}

/** The options every role shares: selection and reports. */
function commonOptions(cmd: Command): Command {
  return cmd
    .option('--grep <regexp>', 'only scenarios whose id, title or requirements match')
    .option('--list', 'print the scenarios and exit', false)
    .option('--report-json <file>', 'write the full result as JSON')
    .option('--junit <file>', 'write JUnit XML')
    .option('--html <file>', 'write a self-contained HTML report')
    .option('--expected-failures <file>', 'requirement IDs known to fail (one per line)');
}

export async function server(options: ServerOptions): Promise<number> {
  const requirements = requirementsOf('server');
  const scenarios = selected(loadScenarios(requirements), options.grep);
  if (options.list) {
    for (const s of scenarios) console.log(`${s.id.padEnd(40)} ${s.requirements.join(',').padEnd(30)} ${s.title}`);
    return 0;
  }
  const target = new Target({
    url: options.url,
    adminUrl: (options.adminUrl ?? defaultAdminUrl(options.url)).replace(/\/$/, ''),
    adminToken: options.adminToken,
    timeoutMs: options.timeoutMs,
  });
  const fixtureFile = options.fixtures ? (parse(readFileSync(options.fixtures, 'utf8')) as FixtureFile) : undefined;
  const hasClock = await target.hasClock();
  console.log(`bridge-conformance: ${scenarios.length} scenarios against ${options.url} (test clock ${hasClock ? 'on' : 'off'}${fixtureFile ? ', fixtures file' : ''})`);

  const started = performance.now();
  const startedAt = new Date().toISOString();
  const results: ScenarioResult[] = [];
  for (const s of scenarios) {
    const outcome = await runScenario(s, { target, hasClock, realTime: options.realTime, realTimeMaxMs: options.realTimeMax, timeoutMs: options.timeoutMs, fixtureFile });
    results.push({ id: s.id, file: s.file, title: s.title, requirements: s.requirements, ...outcome });
    progress(s, results[results.length - 1]!);
  }
  const expected = readExpectedFailures(options.expectedFailures);
  const verdicts = judge(requirements, results, expected);
  const result: RunResult = { target: options.url, startedAt, durationMs: Math.round(performance.now() - started), hasClock, scenarios: results, ...verdicts };

  return finish(result, options, true);
}

interface ClientOptions extends CommonOptions {
  role: 'app' | 'agent';
  command: string;
  slow: boolean;
  connectTimeoutMs: number;
}

/**
 * `bridge-conformance client --role app|agent --command "<cmd>"`: plays the bridge. For each client scenario of the
 * role it starts a mock bridge, runs the command with BRIDGE_URL, BRIDGE_TOKEN and BRIDGE_SCENARIO, and judges what
 * the client sends. Same output, reports and exit code as `server`.
 */
export async function client(options: ClientOptions): Promise<number> {
  const requirements = requirementsOf('client');
  const scenarios = selected(CLIENT_SCENARIOS.filter((s) => s.role === options.role), options.grep);
  if (options.list) {
    for (const s of scenarios) console.log(`${s.id.padEnd(40)} ${s.requirements.join(',').padEnd(30)} ${s.title}${s.optIn ? ' (slow: --slow)' : ''}`);
    return 0;
  }
  const target = `${options.role} client: ${options.command}`;
  console.log(`bridge-conformance: ${scenarios.length} client scenarios for the ${target}`);
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const results: ScenarioResult[] = [];
  for (const s of scenarios) {
    const outcome = s.optIn && !options.slow
      ? { status: 'skipped' as const, reason: 'slow scenario: pass --slow to run it', durationMs: 0, transcript: [] }
      : await runClientScenario(s, { command: options.command, connectTimeoutMs: options.connectTimeoutMs });
    results.push({ id: s.id, file: 'client/scenarios.ts', title: s.title, requirements: s.requirements, ...outcome });
    progress(s, results[results.length - 1]!);
  }
  // Only the requirements this role's scenarios can check: the other role's are not "untested" here.
  const mine = new Map([...requirements].filter(([id]) => CLIENT_SCENARIOS.some((s) => s.role === options.role && s.requirements.includes(id))));
  const verdicts = judge(mine, results, readExpectedFailures(options.expectedFailures));
  const result: RunResult = { target, startedAt, durationMs: Math.round(performance.now() - started), hasClock: false, scenarios: results, ...verdicts };
  return finish(result, options, false);
}

export function program(): Command {
  const cmd = new Command('bridge-conformance').description('Checks a bridge against the agent messaging bridge protocol.');
  const serverCmd = cmd
    .command('server')
    .description('run the scenarios against a running bridge')
    .requiredOption('--url <url>', 'the bridge base URL, e.g. ws://127.0.0.1:8080/v1')
    .option('--admin-url <url>', 'HTTP base of the admin API (default: the --url host)')
    .option('--admin-token <token>', 'admin token, to provision fixtures (env ADMIN_TOKEN)', process.env.ADMIN_TOKEN)
    .option('--fixtures <file>', 'pre-provisioned apps and agents (YAML or JSON) instead of the admin API')
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
    .requiredOption('--command <cmd>', 'the client to run (a shell command line); it gets BRIDGE_URL, BRIDGE_TOKEN and BRIDGE_SCENARIO')
    .option('--slow', 'also run the slow scenarios (app-heartbeat: about 35 s)', false)
    .option('--connect-timeout-ms <ms>', "how long the client may take to start and connect", int('--connect-timeout-ms'), 30_000);
  commonOptions(clientCmd).action(async (opts: ClientOptions) => {
    process.exitCode = await client(opts);
  });
  return cmd;
}
