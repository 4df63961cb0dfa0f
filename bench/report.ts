// What a benchmark run prints and keeps: one table per scenario, the targets met or not, and the machine the
// figures came from, so that two runs' JSON files can be compared.
import { execFileSync } from 'node:child_process';
import { arch, cpus, platform, release, totalmem } from 'node:os';
import { bridgeDirInUse, ROOT } from './processes.js';

export interface Table {
  title: string;
  columns: string[];
  rows: (string | number | null)[][];
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  met: boolean | null;
}

export function printTable(t: Table): void {
  const cells = [t.columns, ...t.rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c))))];
  const widths = t.columns.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  console.log(`\n${t.title}\n`);
  for (const [n, row] of cells.entries()) {
    console.log(row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
    if (n === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}

export function printTargets(targets: Target[]): void {
  console.log('\nTargets (this machine)\n');
  for (const t of targets) {
    const verdict = t.met === null ? 'n/a ' : t.met ? 'met ' : 'MISS';
    console.log(`  [${verdict}] ${t.name}: ${t.goal}; measured ${t.measured}`);
  }
}

function gitCommit(dir = ROOT): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

export function machine() {
  return {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    memory_gb: Number((totalmem() / 2 ** 30).toFixed(1)),
    node: process.version,
    platform: `${platform()} ${release()} ${arch()}`,
    git_commit: gitCommit(),
    /** The checkout whose bridge ran (--bridge-dir), when not this one. */
    bridge: bridgeDirInUse() === ROOT ? null : { dir: bridgeDirInUse(), git_commit: gitCommit(bridgeDirInUse()) },
  };
}

export const ratio = (a: number | null | undefined, b: number | null | undefined, digits = 3) =>
  a === null || a === undefined || b === null || b === undefined || b === 0 ? null : Number((a / b).toFixed(digits));
