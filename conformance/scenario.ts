// Scenario files (conformance/scenarios/*.yaml) and the requirement registry (conformance/requirements.yaml):
// loading and checking their shape, so a typo in a file a third party wrote fails with its name and place.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { TARGET_SETTINGS_DEFAULTS } from '../generated/index.js';
import type { ProvisionAction } from './provision/provisioner.js';

const SETTING_KEYS = Object.keys(TARGET_SETTINGS_DEFAULTS);

export const CONFORMANCE_DIR = resolve(import.meta.dirname);

export type Level = 'MUST' | 'SHOULD' | 'MAY';

/** Where a requirement comes from: the protocol itself, or a decision of this implementation. */
export type Source = 'protocol' | 'decision';

/** What a run judges: the protocol alone (the default), or the protocol and this implementation's decisions. */
export type Profile = 'protocol' | 'bridge';
export const PROFILES: readonly Profile[] = ['protocol', 'bridge'];

export interface Requirement {
  id: string;
  level: Level;
  source: Source;
  /** Its anchor in this repository: `spec/protocol.md#handshake-carriers`, `spec/protocol.md#W1`. */
  cite: string;
  text: string;
}

/** Whether a run of `profile` judges the requirement. */
export const inProfile = (r: Pick<Requirement, 'source'>, profile: Profile): boolean => profile === 'bridge' || r.source === 'protocol';

/** Judged in every scenario of the server role: every frame received is checked against the schemas. */
export const FRAME_REQUIREMENTS = { protocol: 'MSG-001', decision: 'MSG-002' } as const;

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
  /** The requirements its steps check (`checks`), plus the frame requirements every scenario judges. */
  requirements: string[];
  fixtures: Fixtures;
  /** Target settings it takes numbers from: when one is null (the target has no such mechanism) it is waived. */
  settings: string[];
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
  'listSessions',
  'refused',
  'expectOneClosed',
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
    if (r.source !== 'protocol' && r.source !== 'decision') fail(file, `${id}: source must be protocol or decision`);
    if (!/^spec\/protocol\.md#[A-Za-z0-9-]+$/.test(r.cite ?? '') || !r.text) fail(file, `${id}: needs cite (spec/protocol.md#anchor) and text`);
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
      fail(file, `${where}[${i}].checks must list requirement IDs of this scenario's requirements; got ${JSON.stringify(checks)}`);
    }
    // collect matches each frame against several patterns and cannot say which decision a mismatch breaks.
    if (keys[0] === 'collect' && oursIn((step as Step).collect).length) fail(file, `${where}[${i}]: collect does not judge $ours; check the decision in a step of its own`);
    const others = keys[0] === 'repeat' ? [] : allChecks([step as Step]).filter((id) => !requirementIds.has(id));
    if (others.length) fail(file, `${where}[${i}] checks ${others.join(', ')}, not among this scenario's requirements`);
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
    const steps = checkSteps(name, raw.steps, 'steps', new Set(raw.requirements));
    const checked = new Set(allChecks(steps));
    const unchecked = raw.requirements.filter((id) => !checked.has(id));
    if (unchecked.length) fail(name, `names ${unchecked.join(', ')} but no step checks it (add it to a step's checks)`);
    for (const key of raw.settings ?? []) if (!SETTING_KEYS.includes(key)) fail(name, `settings names ${key}, not one of ${SETTING_KEYS.join(', ')}`);
    scenarios.push({
      id: basename(name, '.yaml'),
      file: name,
      title: raw.title,
      requirements: [...raw.requirements, ...Object.values(FRAME_REQUIREMENTS).filter((id) => requirements.has(id))],
      fixtures: raw.fixtures ?? {},
      settings: raw.settings ?? [],
      steps,
    });
  }
  return scenarios;
}

/** Every requirement some step (at any depth) checks: its `checks`, a refusal's `form`, and `$ours` patterns. */
export function allChecks(steps: Step[]): string[] {
  return steps.flatMap((step) => {
    const [kind, args] = Object.entries(step)[0] as [string, Record<string, any>];
    if (kind === 'repeat') return allChecks(args.steps);
    return [...(args?.checks ?? []), ...(args?.form ? [args.form] : []), ...oursIn(args)];
  });
}

function oursIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(oursIn);
  if (!value || typeof value !== 'object') return [];
  const v = value as Record<string, unknown>;
  return [...(typeof v.$ours === 'string' ? [v.$ours] : []), ...Object.values(v).flatMap(oursIn)];
}

/**
 * How far a scenario moves the bridge's clock (then it needs the test clock, or --real-time for short moves).
 * `resolve` turns a step's `ms` (a number, or an expression of the target's settings) into milliseconds.
 */
export function clockTotalMs(steps: Step[], resolve: (ms: unknown) => number = Number): number {
  let total = 0;
  for (const step of steps) {
    if (step.advanceClock) total += resolve(step.advanceClock.ms);
    if (step.repeat) total += resolve(step.repeat.times) * clockTotalMs(step.repeat.steps, resolve);
  }
  return total;
}

/** The provisioning actions a scenario's steps need beyond `create` (a fixtures file can do none of them). */
export function actionsNeeded(steps: Step[]): Set<ProvisionAction> {
  const actions = new Set<ProvisionAction>();
  const visit = (list: Step[]) => {
    for (const s of list) {
      if (s.rotateToken) actions.add('rotate');
      if (s.deactivate) actions.add('deactivate');
      if (s.setAllowlist) actions.add('set_allowlist');
      if (s.listSessions) actions.add('list_sessions');
      if (s.repeat) visit(s.repeat.steps);
    }
  };
  visit(steps);
  return actions;
}
