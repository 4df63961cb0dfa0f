// The baseline file (--expected-failures): the failures a target knows it has, so that CI stays green on them and
// goes red on anything new. An entry names a requirement (`AGT-006`: all its failures), a check of it in one
// scenario (`AGT-006@agt-bad-fields`) or at one step (`AGT-006@agt-bad-fields#14`). An entry whose failure is gone
// is stale and fails the run, so the list only ever shrinks; one about what the run did not judge is unused.
import { readFileSync } from 'node:fs';
import type { ReportBaselineEntry } from '../generated/index.js';

export interface BaselineEntry {
  /** The entry as written. */
  text: string;
  requirement: string;
  scenario?: string;
  step?: number;
}

/** An entry and what became of it (spec/conformance.yaml ReportBaselineEntry). */
export type BaselineVerdict = ReportBaselineEntry;

const ENTRY = /^([A-Z]+-\d{3})(?:@([a-z0-9][a-z0-9-]*)(?:#(\d+))?)?$/;

/** One entry per line (a # starts a comment, "- " list marks are allowed), or a YAML list. */
export function readBaseline(file: string | undefined): BaselineEntry[] {
  if (!file) return [];
  return parseBaseline(readFileSync(file, 'utf8').split('\n'), file);
}

export function parseBaseline(lines: Iterable<string>, file = 'the baseline'): BaselineEntry[] {
  const entries: BaselineEntry[] = [];
  let n = 0;
  for (const line of lines) {
    n++;
    const text = line
      .replace(/#(?!\d).*/, '')
      .replace(/^\s*-\s*/, '')
      .trim();
    if (!text) continue;
    const m = ENTRY.exec(text);
    if (!m)
      throw new Error(
        `${file}, line ${n}: "${text}" is not an entry (REQ-001, REQ-001@scenario-id or REQ-001@scenario-id#step)`,
      );
    entries.push({
      text,
      requirement: m[1]!,
      ...(m[2] ? { scenario: m[2] } : {}),
      ...(m[3] ? { step: Number(m[3]) } : {}),
    });
  }
  return entries;
}

/** Whether an entry covers a failure of its requirement seen in `scenario` at `step`. */
export const covers = (e: BaselineEntry, requirement: string, scenario: string, step: number | undefined): boolean =>
  e.requirement === requirement &&
  (e.scenario === undefined || e.scenario === scenario) &&
  (e.step === undefined || e.step === step);
