// Runs `bridge-conformance server` in-process for a test: its console output captured (and returned), its JSON
// report read back.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { server } from '../../conformance/cli.js';
import type { RunResult } from '../../conformance/results.js';

export type SuiteOptions = Partial<Parameters<typeof server>[0]> & Pick<Parameters<typeof server>[0], 'url'>;

export interface SuiteRun {
  code: number;
  /** Undefined when the run stopped before any scenario (exit 2). */
  report: RunResult | undefined;
  output: string;
}

export async function runSuite(options: SuiteOptions): Promise<SuiteRun> {
  return captured((reportJson) =>
    server({
      profile: 'protocol',
      realTime: false,
      realTimeMax: 20_000,
      timeoutMs: 2_000,
      list: false,
      reportJson,
      ...options,
    }),
  );
}

/** Runs a mode of the runner in-process with its console captured, and reads back the JSON report it wrote. */
export async function captured(run: (reportJson: string) => Promise<number>): Promise<SuiteRun> {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-run-'));
  const reportJson = join(dir, 'report.json');
  const lines: string[] = [];
  const { log, error } = console;
  console.log = (...args: unknown[]) => void lines.push(args.join(' '));
  console.error = (...args: unknown[]) => void lines.push(args.join(' '));
  try {
    const code = await run(reportJson);
    let report: RunResult | undefined;
    try {
      report = JSON.parse(readFileSync(reportJson, 'utf8')) as RunResult;
    } catch {
      report = undefined;
    }
    return { code, report, output: lines.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The ids of the requirements with a verdict, sorted. */
export const withVerdict = (report: RunResult | undefined, verdict: string): string[] =>
  (report?.requirements ?? [])
    .filter((r) => r.verdict === verdict)
    .map((r) => r.id)
    .sort();

/** One line per scenario that did not pass, for assertion messages. */
export const explain = (report: RunResult | undefined): string =>
  (report?.scenarios ?? [])
    .filter((s) => s.status !== 'passed')
    .map((s) => `${s.id}: ${s.status}${s.failedStep ? ` at step ${s.failedStep}` : ''} — ${s.reason}`)
    .join('\n');
