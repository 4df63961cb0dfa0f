// The target's settings (--settings FILE, YAML or JSON, schema TargetSettings in spec/conformance.yaml): the
// numbers scenarios take (timeouts, the rate limit), and null for a mechanism the target does not have.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { expand } from './generate.js';
import { interpolate } from './match.js';
import { PreflightError } from './preflight.js';
import {
  describeErrors,
  validateTargetSettings,
  TARGET_SETTINGS_DEFAULTS,
  type TargetSettings,
} from '../generated/index.js';

export type Settings = Required<TargetSettings>;

export interface LoadedSettings {
  values: Settings;
  /** The file they came from, if any. */
  file?: string;
}

/** The settings with defaults for every key the file leaves out; a bad file is one error naming each bad key. */
export function loadSettings(file: string | undefined): LoadedSettings {
  if (!file) return { values: { ...TARGET_SETTINGS_DEFAULTS } };
  let data: unknown;
  try {
    data = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new PreflightError(`--settings ${file}: ${(err as Error).message}`);
  }
  if (data === null || data === undefined) data = {};
  const problems: string[] = [];
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    const known = Object.keys(TARGET_SETTINGS_DEFAULTS);
    for (const key of Object.keys(data).filter((k) => !known.includes(k)))
      problems.push(`${key}: is not a setting (the settings are ${known.join(', ')})`);
    // Each known key on its own, so every bad one is named (the validator stops at the first).
    for (const [key, v] of Object.entries(data).filter(([k]) => known.includes(k))) {
      if (!validateTargetSettings({ [key]: v })) problems.push(describeErrors(validateTargetSettings.errors));
    }
  } else if (!validateTargetSettings(data)) {
    problems.push(describeErrors(validateTargetSettings.errors));
  }
  if (problems.length) throw new PreflightError(`--settings ${file}: ${problems.join('; ')}`);
  return { values: { ...TARGET_SETTINGS_DEFAULTS, ...(data as TargetSettings) }, file };
}

/** The setting keys of a scenario that are null: the target has no such mechanism, by the user's own statement. */
export function nullSettings(keys: string[], settings: Settings): string[] {
  return keys.filter((k) => settings[k as keyof Settings] === null);
}

/** `${settings.agent_timeout_ms}` and the like, for scenario expressions. */
export const settingsBindings = (settings: Settings): Map<string, unknown> =>
  new Map(Object.entries(settings).map(([k, v]) => [`settings.${k}`, v]));

/** A step's number that may be an expression of the settings (`{ $sum: ["${settings.agent_timeout_ms}", 1000] }`). */
export const settingsNumber =
  (settings: Settings) =>
  (value: unknown): number =>
    Number(expand(interpolate(value, settingsBindings(settings))));
