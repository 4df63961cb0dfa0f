// Which suite and which requirement set judged a target, stated by every report (console, JSON, JUnit, HTML): a
// verdict means something only next to the rules it was judged by, and two reports are comparable only when both
// versions agree. The suite's version is the package's; the requirement set's is a digest of the loaded registry,
// so it moves with requirements.yaml even between two releases (a requirement added, removed or reworded).
import { createHash } from 'node:crypto';
import { VERSION, type ReportSuite } from '../generated/index.js';
import type { Requirement } from './scenario.js';

/** Which suite judged, and by which requirement set (spec/conformance.yaml ReportSuite). */
export type SuiteVersion = ReportSuite;

/**
 * The digest of a requirement set: SHA-256 of its canonical JSON, every requirement's id, level, source, cite and
 * text, in that order, sorted by id. Only what a requirement says counts: the file's comments, layout and order,
 * and any other key, change nothing. Sorted by code unit, not localeCompare, so the order is the same on every
 * machine. 16 hex characters (64 bits), as the spec digest of generated/: short enough to read and compare in a
 * console line, and no two versions of the registry will ever share one by chance.
 */
export function requirementsDigest(requirements: Iterable<Requirement>): string {
  const canonical = [...requirements]
    .map(({ id, level, source, cite, text }) => ({ id, level, source, cite, text }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return `sha256:${createHash('sha256').update(JSON.stringify(canonical)).digest('hex').slice(0, 16)}`;
}

/** The suite's version and that of the whole registry it loaded (both roles, every profile: one set, one digest). */
export function suiteVersion(registry: Map<string, Requirement>): SuiteVersion {
  return { version: VERSION, requirements: requirementsDigest(registry.values()) };
}

/** The console's first line of a run: `bridge-conformance 0.2.0, requirements sha256:…`. */
export const suiteLine = (suite: SuiteVersion): string =>
  `bridge-conformance ${suite.version}, requirements ${suite.requirements}`;
