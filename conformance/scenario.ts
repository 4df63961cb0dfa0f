// Scenario files (conformance/scenarios/*.yaml) and the requirement registry (conformance/requirements.yaml):
// loading and checking their shape, so a typo in a file a third party wrote fails with its name and place.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parse } from 'yaml';

export const CONFORMANCE_DIR = resolve(import.meta.dirname);

export type Level = 'MUST' | 'SHOULD' | 'MAY';

export interface Requirement {
  id: string;
  level: Level;
  section: string;
  text: string;
}

export interface AgentFixture {
  org: string;
  name?: string;
  description?: string;
  ttl_days?: number;
  /** App fixture names; absent or null: no allowlist. */
  allowlist?: string[] | null;
}

export interface Fixtures {
  orgs?: string[];
  apps?: Record<string, string>;
  agents?: Record<string, AgentFixture>;
}

export type Step = Record<string, any>;

export interface Scenario {
  id: string;
  file: string;
  title: string;
  requirements: string[];
  fixtures: Fixtures;
  steps: Step[];
}

export const STEP_KINDS = [
  'connect',
  'send',
  'expect',
  'collect',
  'expectClose',
  'expectSilence',
  'close',
  'advanceClock',
  'http',
  'rotateToken',
  'deactivate',
  'setAllowlist',
  'repeat',
] as const;

function fail(file: string, message: string): never {
  throw new Error(`${file}: ${message}`);
}

export function loadRequirements(file = join(CONFORMANCE_DIR, 'requirements.yaml')): Map<string, Requirement> {
  const raw = parse(readFileSync(file, 'utf8')) as Record<string, Omit<Requirement, 'id'>>;
  const map = new Map<string, Requirement>();
  for (const [id, r] of Object.entries(raw)) {
    if (!/^[A-Z]+-\d{3}$/.test(id)) fail(file, `requirement id ${id} must look like AUTH-001`);
    if (!['MUST', 'SHOULD', 'MAY'].includes(r.level)) fail(file, `${id}: level must be MUST, SHOULD or MAY`);
    if (!r.section || !r.text) fail(file, `${id}: needs section and text`);
    map.set(id, { id, ...r });
  }
  return map;
}

function checkSteps(file: string, steps: unknown, where: string, requirementIds: Set<string>): Step[] {
  if (!Array.isArray(steps) || steps.length === 0) fail(file, `${where} must be a non-empty list`);
  steps.forEach((step, i) => {
    const keys = step && typeof step === 'object' ? Object.keys(step) : [];
    if (keys.length !== 1 || !(STEP_KINDS as readonly string[]).includes(keys[0]!)) {
      fail(file, `${where}[${i}] must have exactly one of ${STEP_KINDS.join(', ')}; got ${JSON.stringify(step)}`);
    }
    if (keys[0] === 'repeat') checkSteps(file, (step as Step).repeat?.steps, `${where}[${i}].repeat.steps`, requirementIds);
    const checks = (step as Step)[keys[0]!]?.checks;
    if (checks !== undefined && !(Array.isArray(checks) && checks.every((c) => requirementIds.has(c)))) {
      fail(file, `${where}[${i}].checks must list requirement IDs of this scenario's registry; got ${JSON.stringify(checks)}`);
    }
  });
  return steps as Step[];
}

export function loadScenarios(requirements: Map<string, Requirement>, dir = join(CONFORMANCE_DIR, 'scenarios')): Scenario[] {
  const scenarios: Scenario[] = [];
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    const file = join(dir, name);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed since the listing
      throw err;
    }
    const raw = parse(text) as Partial<Scenario>;
    if (!raw?.title) fail(name, 'needs a title');
    if (!raw.requirements?.length) fail(name, 'needs requirements: [IDs]');
    for (const id of raw.requirements) if (!requirements.has(id)) fail(name, `names unknown requirement ${id}`);
    scenarios.push({
      id: basename(name, '.yaml'),
      file: name,
      title: raw.title,
      requirements: raw.requirements,
      fixtures: raw.fixtures ?? {},
      steps: checkSteps(name, raw.steps, 'steps', new Set(raw.requirements)),
    });
  }
  return scenarios;
}

/** Whether a scenario moves the bridge's clock (then it needs the test clock, or --real-time for short moves). */
export function clockTotalMs(steps: Step[]): number {
  let total = 0;
  for (const step of steps) {
    if (step.advanceClock) total += Number(step.advanceClock.ms);
    if (step.repeat) total += Number(step.repeat.times) * clockTotalMs(step.repeat.steps);
  }
  return total;
}

/** Whether a scenario changes registrations beyond provisioning (then a fixtures file cannot serve it). */
export function needsAdmin(steps: Step[]): boolean {
  return steps.some((s) => s.rotateToken || s.deactivate || s.setAllowlist || (s.http && s.http.token === 'admin') || (s.repeat && needsAdmin(s.repeat.steps)));
}
