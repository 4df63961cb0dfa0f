// Variables of the environment that look like the bridge's settings but are none: a misspelt `ADMIN_TOKN` would
// otherwise leave the admin API off without a word. Told once at start, by name only (a value may be a secret).
import leven from 'leven';

export interface UnknownSetting {
  name: string;
  /** The setting it is closest to, when it is one or two letters away. */
  meant?: string;
}

/** OpenTelemetry's variables: read by its exporter too (OTEL_EXPORTER_OTLP_HEADERS…), so not ours to judge. */
const OTHERS = 'OTEL_';

/** How far a name may be from a setting to be taken for a misspelling of it: none for the shortest (HOST, PORT). */
const reach = (setting: string) => (setting.length >= 8 ? 2 : setting.length >= 5 ? 1 : 0);

/** The first two words of a name (`EVENT_LOG_`, `RATE_LIMIT_`): the families of settings a new name may belong to. */
function family(name: string): string | undefined {
  const words = name.split('_');
  return words.length > 2 ? `${words[0]}_${words[1]}_` : undefined;
}

/**
 * The names in `env` that are not settings but are one (or, for long ones, two) letters away from one, start with
 * `BRIDGE_`, or start with the first two words of a setting's name (`EVENT_LOG_RETENTION` for
 * `EVENT_LOG_RETENTION_DAYS`). Other variables (PATH, NODE_ENV, REDIS_HOST of another program) are not ours to judge.
 */
export function unknownSettings(env: NodeJS.ProcessEnv, settings: readonly string[]): UnknownSetting[] {
  const known = new Set(settings);
  const families = new Set(settings.map(family).filter((f) => f !== undefined));
  const found: UnknownSetting[] = [];
  for (const name of Object.keys(env).sort()) {
    if (known.has(name) || name !== name.toUpperCase() || name.startsWith(OTHERS)) continue;
    let meant: string | undefined;
    let best = Infinity;
    for (const setting of settings) {
      const distance = leven(name, setting);
      if (distance <= reach(setting) && distance < best) [meant, best] = [setting, distance];
    }
    if (meant) found.push({ name, meant });
    else if (name.startsWith('BRIDGE_') || startsFamily(name, families)) found.push({ name });
  }
  return found;
}

/** `EVENT_LOG` alone, or `MAX_EVENTS_IN_FLIGHT_PER_ORG`: a name that begins with a family's two words. */
function startsFamily(name: string, families: Set<string>): boolean {
  for (const f of families) if (name.startsWith(f) || `${name}_` === f) return true;
  return false;
}
