// The guard against regressions: a short benchmark (scenarios 1–3, 5 s each) whose ratios — the bridge against the
// bare relay of the same run — are compared with a committed baseline (bench/baseline.json), which holds each
// ratio's runs on one commit and the band they spread over (the machine's noise). A ratio outside its band, widened
// by half its width on each side, has moved; inside it, it is noise. Information, not a gate: a shared machine's
// noise can exceed any band, so `check` always exits 0 once it has run.
//
//   npx tsx bench/guard.ts record [--runs 5]   runs the short benchmark N times, writes bench/baseline.json
//   npx tsx bench/guard.ts check               runs it once, prints each ratio against the baseline
//
// The short benchmark is `bench/run.ts` with GUARD_ARGS; each run writes its own results file, read back here.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './processes.js';
import { machine } from './report.js';

export const GUARD_ARGS = ['--scenarios', '1,2,3', '--duration', '5', '--warmup', '2', '--rates', '10000'];
const BASELINE = join(ROOT, 'bench/baseline.json');

type Results = { scenarios: Record<string, any> };

/** The figures the guard follows, read from one results file; higher is better unless `lowerIsBetter`. */
export const FIGURES: { name: string; lowerIsBetter?: boolean; read(r: Results): number | null }[] = [
  { name: '1 fragments/s, bridge/relay', read: (r) => r.scenarios.token_streaming?.ratio_bridge_over_relay ?? null },
  {
    name: '1 fragments/s, bridge/batched relay',
    read: (r) => r.scenarios.token_streaming?.ratio_bridge_over_batched_relay ?? null,
  },
  {
    name: '1 fragments/s, bridge/socket.io',
    read: (r) => r.scenarios.token_streaming?.ratio_bridge_over_socketio ?? null,
  },
  {
    name: '2 added p99 at 10k/s (ms)',
    lowerIsBetter: true,
    read: (r) => r.scenarios.open_loop_latency?.find((x: { rate: number }) => x.rate === 10_000)?.added_p99_ms ?? null,
  },
  {
    name: '2 p99 at 10k/s, bridge/socket.io',
    lowerIsBetter: true,
    read: (r) =>
      r.scenarios.open_loop_latency?.find((x: { rate: number }) => x.rate === 10_000)?.ratio_bridge_over_socketio ??
      null,
  },
  {
    name: '3 accepted/s, bridge/socket.io',
    read: (r) => r.scenarios.event_acceptance?.ratio_bridge_over_socketio ?? null,
  },
  {
    name: '3 accepted/s, bridge/echo',
    read: (r) => quotient(r.scenarios.event_acceptance, (x) => x.closed.accepted_per_s),
  },
  {
    name: '3 p99 at 2k/s, bridge/echo',
    lowerIsBetter: true,
    read: (r) => quotient(r.scenarios.event_acceptance, (x) => x.open.latency_ms.p99),
  },
];

function quotient(s: any, f: (x: any) => number): number | null {
  if (!s?.bridge || !s?.relay || !f(s.relay)) return null;
  return Number((f(s.bridge) / f(s.relay)).toFixed(3));
}

export interface Band {
  runs: number[];
  mean: number;
  min: number;
  max: number;
  lowerIsBetter: boolean;
}

export interface Baseline {
  note: string;
  recorded_at: string;
  machine: ReturnType<typeof machine>;
  args: string[];
  figures: Record<string, Band>;
}

/** Each figure's runs, their mean and their band. */
export function bands(runs: Results[]): Record<string, Band> {
  const out: Record<string, Band> = {};
  for (const f of FIGURES) {
    const values = runs.map((r) => f.read(r)).filter((v): v is number => typeof v === 'number');
    if (!values.length) continue;
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    out[f.name] = {
      runs: values,
      mean: Number(mean.toFixed(3)),
      min: Math.min(...values),
      max: Math.max(...values),
      lowerIsBetter: !!f.lowerIsBetter,
    };
  }
  return out;
}

export type Verdict = 'within noise' | 'better' | 'WORSE' | 'not in the baseline' | 'not measured';

/** Where one run's figure stands against its band widened by half its width on each side. */
export function judgeFigure(band: Band | undefined, value: number | null): Verdict {
  if (value === null) return 'not measured';
  if (!band) return 'not in the baseline';
  const slack = (band.max - band.min) / 2;
  if (value >= band.min - slack && value <= band.max + slack) return 'within noise';
  const higher = value > band.max + slack;
  return higher !== band.lowerIsBetter ? 'better' : 'WORSE';
}

/** Runs the short benchmark once; its results. */
function runOnce(i: number, of: number): Results {
  console.error(`guard: run ${i} of ${of}: npx tsx bench/run.ts ${GUARD_ARGS.join(' ')}`);
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const before = new Set(readdirSync(join(ROOT, 'bench/results')).filter((f) => f.endsWith('.json')));
  execFileSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...GUARD_ARGS], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const written = readdirSync(join(ROOT, 'bench/results')).filter((f) => f.endsWith('.json') && !before.has(f));
  if (written.length !== 1) throw new Error(`guard: expected one new results file, found ${written.length}`);
  return JSON.parse(readFileSync(join(ROOT, 'bench/results', written[0]!), 'utf8')) as Results;
}

function record(count: number): void {
  const runs = Array.from({ length: count }, (_, i) => runOnce(i + 1, count));
  const baseline: Baseline = {
    note: 'Written by `npx tsx bench/guard.ts record`: each figure of the short benchmark on one commit, run after run on one machine; the band is its min..max (the noise).',
    recorded_at: new Date().toISOString(),
    machine: machine(),
    args: GUARD_ARGS,
    figures: bands(runs),
  };
  writeFileSync(BASELINE, `${JSON.stringify(baseline, null, 2)}\n`);
  print(baseline, undefined);
  console.log(`written: ${BASELINE}`);
}

function check(): void {
  const baseline = JSON.parse(readFileSync(BASELINE, 'utf8')) as Baseline;
  print(baseline, runOnce(1, 1));
}

function print(baseline: Baseline, run: Results | undefined): void {
  const at = `${baseline.machine.git_commit?.slice(0, 12) ?? '?'}, ${baseline.machine.cpus} x ${baseline.machine.cpu_model}`;
  console.log(
    `baseline: ${baseline.figures[FIGURES[0]!.name]?.runs.length ?? 0} runs of ${at}, ${baseline.recorded_at}`,
  );
  for (const f of FIGURES) {
    const band = baseline.figures[f.name];
    const seen = band ? `${band.mean} [${band.min}..${band.max}]` : '-';
    const value = run ? f.read(run) : null;
    const now = run ? `  this run ${value ?? '-'}: ${judgeFigure(band, value)}` : '';
    console.log(`  ${f.name.padEnd(38)} baseline ${seen.padEnd(24)}${now}`);
  }
  if (run) console.log(`load average now: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
}

const isMain = process.argv[1]?.endsWith('guard.ts');
if (isMain) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { runs: { type: 'string', default: '5' } },
  });
  const runs = Number(values.runs);
  if (positionals[0] === 'record' && Number.isInteger(runs) && runs >= 2) record(runs);
  else if (positionals[0] === 'check') check();
  else {
    console.error('usage: npx tsx bench/guard.ts record [--runs N (2 or more)] | check');
    process.exitCode = 2;
  }
}
