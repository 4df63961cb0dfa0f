// The target's settings (--settings FILE, YAML or JSON, schema TargetSettings in spec/conformance.yaml): the
// numbers scenarios take (timeouts, the rate limit), and null for a mechanism the target does not have.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { PreflightError } from './preflight.js';
import { errorField, describeErrors, validateTargetSettings, TARGET_SETTINGS_DEFAULTS, type TargetSettings } from '../generated/index.js';

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
  if (!validateTargetSettings(data)) {
    const keys = [...new Set((validateTargetSettings.errors ?? []).map(errorField))];
    throw new PreflightError(`--settings ${file}: ${describeErrors(validateTargetSettings.errors)} (keys: ${keys.join(', ')}; allowed: ${Object.keys(TARGET_SETTINGS_DEFAULTS).join(', ')})`);
  }
  return { values: { ...TARGET_SETTINGS_DEFAULTS, ...data }, file };
}

/** The setting keys of a scenario that are null: the target has no such mechanism, by the user's own statement. */
export function nullSettings(keys: string[], settings: Settings): string[] {
  return keys.filter((k) => settings[k as keyof Settings] === null);
}
