// What one scenario found, as it runs: every failure (a frame that breaks a frame rule is recorded and the scenario
// goes on, so what it checks later is still judged), the requirements whose checks ran and held, and warnings.
// The runner turns it into the scenario's Outcome (outcome.ts) when the scenario ends, however it ends.
import type { Failure, Warning } from './outcome.js';

export class Ledger {
  readonly failures: Failure[] = [];
  readonly warnings: Warning[] = [];
  private readonly held = new Set<string>();
  /** Requirements whose checks were still ahead when the scenario stopped: held ones among them are not complete. */
  private unfinished = new Set<string>();
  /** The step running (from 1), which failures and frame problems are filed under. */
  step = 0;

  fail(requirements: string[], reason: string, step = this.step): void {
    this.failures.push({ requirements, reason, ...(step ? { step } : {}) });
  }

  /** A frame rule broken: recorded once per requirement and connection, so a stream of bad frames is one finding. */
  frameProblem(requirement: string, actor: string, reason: string): void {
    const key = `${requirement} ${actor}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.fail([requirement], reason);
  }
  private readonly reported = new Set<string>();

  checked(requirements: Iterable<string>): void {
    for (const id of requirements) this.held.add(id);
  }

  warn(requirement: string, reason: string): void {
    this.warnings.push({ requirement, reason });
  }

  /** The scenario stopped before these requirements' remaining checks: what held of them does not pass them. */
  stoppedBefore(requirements: Iterable<string>): void {
    this.unfinished = new Set(requirements);
  }

  get failedRequirements(): string[] {
    return [...new Set(this.failures.flatMap((f) => f.requirements))];
  }

  /** Requirements checked to the end here and never failed here. */
  get checkedRequirements(): string[] {
    const failed = new Set(this.failedRequirements);
    return [...this.held].filter((id) => !failed.has(id) && !this.unfinished.has(id));
  }
}
