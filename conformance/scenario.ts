// Scenario files (conformance/scenarios/*.yaml) and the requirement registry (conformance/requirements.yaml):
// loading and checking their shape, so a typo in a file a third party wrote fails with its name and place.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parse } from 'yaml';
import {
  describeErrors,
  errorField,
  SCENARIO_STEP_SCHEMAS,
  TARGET_SETTINGS_DEFAULTS,
  validateScenarioFile,
  validators,
  type ErrorObject,
  type ReportLevel,
  type ReportProfile,
  type ReportSource,
  type ScenarioFixtures,
} from '../generated/index.js';
import type { ProvisionAction } from './provision/provisioner.js';
import { unpack, type Step, type StepKind } from './steps/kinds.js';

export type { Step, StepKind } from './steps/kinds.js';

const SETTING_KEYS = Object.keys(TARGET_SETTINGS_DEFAULTS);

export const CONFORMANCE_DIR = resolve(import.meta.dirname);

export type Level = ReportLevel;

/**
 * Where a requirement comes from: the protocol itself, a decision of this implementation, or an extension of this
 * implementation that a client opts into (resumable streams, R1-R9).
 */
export type Source = ReportSource;

/**
 * What a run judges: the protocol alone (the default); the protocol and this implementation's decisions; or one
 * extension alone (resume, cancel), which no bridge owes the protocol and which must not count against one that
 * lacks it.
 */
export type Profile = ReportProfile;

const PROFILE_SOURCES: Record<Profile, readonly Source[]> = {
  protocol: ['protocol'],
  bridge: ['protocol', 'decision'],
  resume: ['extension'],
  cancel: ['extension'],
};

/**
 * The profile of each extension, by the prefix of its requirements' ids: each judges its own only. CLC-… are the
 * cancel extension's rules of clients (the client role's).
 */
const EXTENSION_PROFILES: Record<string, Profile> = { RES: 'resume', CAN: 'cancel', CLC: 'cancel' };

/** The extension profile a requirement of source `extension` belongs to. */
export const extensionOf = (id: string): Profile | undefined => EXTENSION_PROFILES[id.split('-')[0]!];
export const PROFILES = Object.keys(PROFILE_SOURCES) as readonly Profile[];
export const SOURCES = [...new Set(Object.values(PROFILE_SOURCES).flat())];

export interface Requirement {
  id: string;
  level: Level;
  source: Source;
  /** Its anchor in this repository: `spec/protocol.md#handshake-carriers`, `spec/protocol.md#W1`. */
  cite: string;
  text: string;
}

/** Judged in every scenario of the server role: every frame received is checked against the schemas. */
export const FRAME_REQUIREMENTS = { protocol: 'MSG-001', decision: 'MSG-002' } as const;

/**
 * The rules whose frames scenarios wait on beside what they check: a pong on each endpoint, and `accepted` before
 * the agent answers. When such a frame does not come, that rule fails and the scenario's other checks are blocked.
 */
export const BARRIERS = { appPong: 'HB-001', agentPong: 'HB-002', acceptedFirst: 'FLOW-011' } as const;

/**
 * Judged on every frame an app connection receives in a scenario of the extension (resume-frames.ts): none of its
 * fields without `?resume=1` (R1); with it, a resume token on each `accepted` (R2) and positions on tokens (R3).
 */
export const EXTENSION_FRAME_REQUIREMENTS = {
  notOptedIn: 'RES-001',
  resumeToken: 'RES-002',
  positions: 'RES-003',
} as const;

/** Every requirement judged on each frame rather than by a step: a scenario does not run for these alone. */
export const EVERY_FRAME: ReadonlySet<string> = new Set([
  ...Object.values(FRAME_REQUIREMENTS),
  ...Object.values(EXTENSION_FRAME_REQUIREMENTS),
]);

/**
 * Judged in every profile: every frame being a message of the protocol, received from a bridge (MSG-001) or sent by
 * a client (CLI-001). The extensions' frames are the protocol's messages with fields, or messages, added.
 */
export const EVERY_PROFILE: ReadonlySet<string> = new Set([FRAME_REQUIREMENTS.protocol, 'CLI-001']);

/** Whether a run of `profile` judges the requirement. */
export const inProfile = (r: Pick<Requirement, 'source'> & { id?: string }, profile: Profile): boolean =>
  (PROFILE_SOURCES[profile].includes(r.source) &&
    (r.source !== 'extension' || r.id === undefined || extensionOf(r.id) === profile)) ||
  (r.id !== undefined && EVERY_PROFILE.has(r.id));

/** The scenario's fixtures as its file gives them (orgs, apps, agents; each part optional). */
export type Fixtures = ScenarioFixtures;

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
  /** It judges an extension (the resume or the cancel profile's scenarios), not the protocol or our decisions. */
  extension: boolean;
}

export const STEP_KINDS = Object.keys(SCENARIO_STEP_SCHEMAS) as StepKind[];

function fail(file: string, message: string): never {
  throw new Error(`${file}: ${message}`);
}

export function loadRequirements(file = join(CONFORMANCE_DIR, 'requirements.yaml')): Map<string, Requirement> {
  const raw = parse(readFileSync(file, 'utf8')) as Record<string, Omit<Requirement, 'id'>>;
  const map = new Map<string, Requirement>();
  for (const [id, r] of Object.entries(raw)) {
    if (!/^[A-Z]+-\d{3}$/.test(id)) fail(file, `requirement id ${id} must look like AUTH-001`);
    if (!['MUST', 'SHOULD', 'MAY'].includes(r.level)) fail(file, `${id}: level must be MUST, SHOULD or MAY`);
    if (!SOURCES.includes(r.source)) fail(file, `${id}: source must be ${SOURCES.join(', ')}`);
    if (!/^spec\/protocol\.md#[A-Za-z0-9-]+$/.test(r.cite ?? '') || !r.text)
      fail(file, `${id}: needs cite (spec/protocol.md#anchor) and text`);
    map.set(id, { id, ...r });
  }
  return map;
}

/** `step 3 (repeat), its step 1 (send)`: where a step is, 1-based as the report counts, with its kind. */
const stepName = (where: string, i: number, kind: string) => `${where ? `${where}, its ` : ''}step ${i + 1} (${kind})`;

/** A step validator's first error, worded for a scenario file: `send.frme: is not a field of send`. */
function stepError(kind: string, errors: ErrorObject[] | null | undefined): string {
  const error = errors?.[0];
  if (error?.keyword === 'additionalProperties')
    return `${errorField(error)}: is not a field of ${kind} (see conformance/README.md)`;
  return describeErrors(errors?.slice(0, 1));
}

/**
 * Checks each step against its own kind's schema, nested steps first, so the error names the step (index and
 * kind) and the bad field instead of the sixteen mismatches of the whole union; then, given the scenario's
 * requirements, what a schema cannot know.
 */
function checkSteps(
  fail: (message: string) => never,
  steps: unknown[],
  where: string,
  requirementIds?: Set<string>,
): void {
  steps.forEach((step, i) => {
    const keys = step && typeof step === 'object' ? Object.keys(step) : [];
    const kind = keys[0] as StepKind;
    if (keys.length !== 1 || !STEP_KINDS.includes(kind)) {
      fail(
        `${stepName(where, i, keys.join(', ') || typeof step)} must have exactly one of ${STEP_KINDS.join(', ')}; got ${JSON.stringify(step)}`,
      );
    }
    const here = stepName(where, i, kind);
    const nested = (step as { repeat?: { steps?: unknown } }).repeat?.steps;
    if (kind === 'repeat' && Array.isArray(nested)) checkSteps(fail, nested, here, requirementIds);
    const validate = validators[SCENARIO_STEP_SCHEMAS[kind]];
    if (!validate(step)) fail(`${here}: ${stepError(kind, validate.errors)}`);
    const { args } = unpack(step as Step);
    if (!requirementIds) return;
    if (kind === 'send' && !('frame' in args) && !('raw' in args)) fail(`${here}: send needs frame or raw`);
    const checks = args.checks ?? [];
    if (!checks.every((c) => requirementIds.has(c)))
      fail(`${here}: checks must list requirement IDs of this scenario's requirements; got ${JSON.stringify(checks)}`);
    // collect matches each frame against several patterns and cannot say which decision a mismatch breaks.
    if (kind === 'collect' && oursIn(args).length)
      fail(`${here}: collect does not judge $ours; check the decision in a step of its own`);
    const others = kind === 'repeat' ? [] : allChecks([step as Step]).filter((id) => !requirementIds.has(id));
    if (others.length) fail(`${here} checks ${others.join(', ')}, not among this scenario's requirements`);
  });
}

/** One scenario file, checked against ScenarioFile (spec/conformance.yaml) and the registry. */
function loadScenario(name: string, text: string, requirements: Map<string, Requirement>): Scenario {
  const raw = parse(text) as unknown;
  const title = (raw as { title?: unknown } | null)?.title;
  const failHere = (message: string): never =>
    fail(name, `scenario ${typeof title === 'string' ? JSON.stringify(title) : basename(name, '.yaml')}, ${message}`);
  if (!validateScenarioFile(raw)) {
    // A bad step is named by its own kind's schema; the file's validator would report every kind's mismatch.
    const steps = (raw as { steps?: unknown } | null)?.steps;
    if (Array.isArray(steps)) checkSteps(failHere, steps, '');
    fail(name, describeErrors(validateScenarioFile.errors));
  }
  checkSteps(failHere, raw.steps, '', new Set(raw.requirements));
  for (const id of raw.requirements) if (!requirements.has(id)) fail(name, `names unknown requirement ${id}`);
  for (const id of needsIn(raw.steps))
    if (!requirements.has(id))
      fail(name, `a step needs unknown requirement ${id} (needs names the rule that brings its frame)`);
  // A scenario judges the extension or the rest, never both: its profile decides whether it runs at all.
  const sources = new Set(raw.requirements.map((id) => requirements.get(id)!.source === 'extension'));
  if (sources.size > 1)
    fail(name, 'names requirements of the extension (source: extension) and others; a scenario belongs to one profile');
  const extension = sources.has(true);
  const checked = new Set(allChecks(raw.steps));
  const unchecked = raw.requirements.filter((id) => !checked.has(id));
  if (unchecked.length) fail(name, `names ${unchecked.join(', ')} but no step checks it (add it to a step's checks)`);
  for (const key of raw.settings ?? [])
    if (!SETTING_KEYS.includes(key)) fail(name, `settings names ${key}, not one of ${SETTING_KEYS.join(', ')}`);
  return {
    id: basename(name, '.yaml'),
    file: name,
    title: raw.title,
    requirements: [
      ...new Set([
        ...raw.requirements,
        ...frameRequirements(extension && raw.requirements.some((id) => extensionOf(id) === 'resume')).filter((id) =>
          requirements.has(id),
        ),
      ]),
    ],
    fixtures: raw.fixtures ?? {},
    settings: raw.settings ?? [],
    steps: raw.steps,
    extension,
  };
}

/** The requirements judged on every frame of a scenario: the schemas', and the resume extension's in its scenarios. */
const frameRequirements = (resumeExtension: boolean): string[] => [
  ...Object.values(FRAME_REQUIREMENTS),
  ...(resumeExtension ? Object.values(EXTENSION_FRAME_REQUIREMENTS) : []),
];

export function loadScenarios(
  requirements: Map<string, Requirement>,
  dir = join(CONFORMANCE_DIR, 'scenarios'),
): Scenario[] {
  const scenarios: Scenario[] = [];
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    let text: string;
    try {
      text = readFileSync(join(dir, name), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed since the listing
      throw err;
    }
    scenarios.push(loadScenario(name, text, requirements));
  }
  return scenarios;
}

/** Every requirement some step (at any depth) checks: its `checks`, a refusal's `form`, and `$ours` patterns. */
export function allChecks(steps: Step[]): string[] {
  return steps.flatMap((step) => {
    const { kind, args } = unpack(step);
    if (kind === 'repeat') return allChecks(args.steps);
    return [...(args.checks ?? []), ...(kind === 'refused' && args.form ? [args.form] : []), ...oursIn(args)];
  });
}

/** The rules steps rely on for the frames they wait for (`needs`), at any depth. */
function needsIn(steps: Step[]): string[] {
  return steps.flatMap((step) => {
    const { kind, args } = unpack(step);
    if (kind === 'repeat') return needsIn(args.steps);
    return 'needs' in args && args.needs ? [args.needs] : [];
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
    const { kind, args } = unpack(step);
    if (kind === 'advanceClock') total += resolve(args.ms);
    if (kind === 'repeat') total += resolve(args.times) * clockTotalMs(args.steps, resolve);
  }
  return total;
}

/** The provisioning action each step kind needs beyond `create` (a fixtures file can do none of them). */
const ACTION_OF: Partial<Record<StepKind, ProvisionAction>> = {
  rotateToken: 'rotate',
  deactivate: 'deactivate',
  setAllowlist: 'set_allowlist',
  listSessions: 'list_sessions',
};

/** The provisioning actions a scenario's steps need beyond `create`. */
export function actionsNeeded(steps: Step[]): Set<ProvisionAction> {
  const actions = new Set<ProvisionAction>();
  const visit = (list: Step[]) => {
    for (const step of list) {
      const { kind, args } = unpack(step);
      const action = ACTION_OF[kind];
      if (action) actions.add(action);
      if (kind === 'repeat') visit(args.steps);
    }
  };
  visit(steps);
  return actions;
}
