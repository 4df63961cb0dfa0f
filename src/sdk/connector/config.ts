// The connector's configuration (§2.6): a JSON or YAML file whose `${VAR}` references are filled in from the
// environment, then checked against the generated ConnectorConfig schema, then completed with the defaults.
// Interpolation happens on the parsed document (string values only), never on the raw text, so a variable's
// value can never change the document's structure.
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  LIMITS,
  describeErrors,
  validateConnectorConfig,
  type ConnectorAgent,
  type ConnectorConfig,
} from '../../../generated/index.js';

/** A start-up error in the configuration; its message names the file and the field. */
export class ConnectorConfigError extends Error {
  override readonly name = 'ConnectorConfigError';
}

export interface ResolvedReconnect {
  enabled: boolean;
  /** -1: for ever (C7). */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface ResolvedConnectorAgent {
  agent_id: string;
  token: string;
  ttl_days: number;
  /** Passed (deep-copied) to each new session; `{}` when the file has none. */
  context: Record<string, unknown>;
}

/** The configuration with every default applied. */
export interface ResolvedConnectorConfig {
  connection: { url: string; reconnect: ResolvedReconnect };
  agents: ResolvedConnectorAgent[];
  health?: { port: number; path: string; host: string };
}

/** The schema's defaults for `health.path` and `health.host` (ConnectorHealthEndpoint). */
export const DEFAULT_HEALTH_PATH = '/health';
export const DEFAULT_HEALTH_HOST = '127.0.0.1';

const REFERENCE = /\$\$|\$\{([^}]*)\}|\$\{/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `agents[0].token` from a path of keys and indices. */
function fieldPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${part}` : part;
  }
  return out || '(root)';
}

/**
 * Replaces every `${VAR}` in every string value of `value` (recursively) with the environment's value. `$${`
 * writes a literal `${`. A variable that is unset or empty is an error naming it and the field, so a token can
 * never silently become an empty string.
 */
export function interpolateEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  source = 'the configuration',
  path: (string | number)[] = [],
): unknown {
  if (typeof value === 'string') {
    return value.replace(REFERENCE, (match, name: string | undefined) => {
      if (match === '$$') return '$';
      const where = `${fieldPath(path)} in ${source}`;
      if (name === undefined)
        throw new ConnectorConfigError(`${where}: unclosed \${ reference (write $\${ for a literal \${)`);
      if (!VARIABLE_NAME.test(name))
        throw new ConnectorConfigError(`${where}: \${${name}} is not a valid environment variable name`);
      const resolved = env[name];
      if (resolved === undefined || resolved === '') {
        throw new ConnectorConfigError(
          `${where}: environment variable ${name} is ${resolved === undefined ? 'not set' : 'empty'} (referenced as \${${name}})`,
        );
      }
      return resolved;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => interpolateEnv(item, env, source, [...path, i]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateEnv(v, env, source, [...path, k])]));
  }
  return value;
}

function withDefaults(config: ConnectorConfig): ResolvedConnectorConfig {
  const r = config.connection.reconnect ?? {};
  const agent = (a: ConnectorAgent): ResolvedConnectorAgent => ({
    agent_id: a.agent_id,
    token: a.token,
    ttl_days: a.ttl_days ?? LIMITS.sessionTtlDefaultDays,
    context: a.context ?? {},
  });
  return {
    connection: {
      url: config.connection.url,
      reconnect: {
        enabled: r.enabled ?? true,
        maxRetries: r.maxRetries ?? LIMITS.connectorReconnectMaxAttempts,
        baseDelayMs: r.baseDelayMs ?? LIMITS.reconnectBaseDelayMs,
        maxDelayMs: r.maxDelayMs ?? LIMITS.reconnectMaxDelayMs,
      },
    },
    agents: config.agents.map(agent),
    ...(config.health
      ? {
          health: {
            port: config.health.port,
            path: config.health.path ?? DEFAULT_HEALTH_PATH,
            host: config.health.host ?? DEFAULT_HEALTH_HOST,
          },
        }
      : {}),
  };
}

/** Checks the schema cannot express: each token belongs to its agent, and no agent is listed twice. */
function crossCheck(config: ConnectorConfig, source: string): void {
  const seen = new Set<string>();
  config.agents.forEach((a, i) => {
    if (seen.has(a.agent_id))
      throw new ConnectorConfigError(
        `agents[${i}].agent_id in ${source}: ${a.agent_id} is listed twice (one connection per agent)`,
      );
    seen.add(a.agent_id);
    // rla_{agent_id}_{secret}; ids never contain `_` (L1), so the middle part is the token's agent.
    const owner = a.token.split('_')[1];
    if (owner !== a.agent_id)
      throw new ConnectorConfigError(
        `agents[${i}].token in ${source}: the token belongs to agent ${owner}, not ${a.agent_id}`,
      );
  });
  const r = config.connection.reconnect;
  if (r?.baseDelayMs !== undefined && r.maxDelayMs !== undefined && r.baseDelayMs > r.maxDelayMs) {
    throw new ConnectorConfigError(
      `connection.reconnect in ${source}: baseDelayMs (${r.baseDelayMs}) is above maxDelayMs (${r.maxDelayMs})`,
    );
  }
}

/** Interpolates, validates and completes an already parsed configuration document. */
export function resolveConnectorConfig(
  document: unknown,
  options: { env?: NodeJS.ProcessEnv; source?: string } = {},
): ResolvedConnectorConfig {
  const source = options.source ?? 'the configuration';
  const interpolated = interpolateEnv(document, options.env ?? process.env, source);
  if (!validateConnectorConfig(interpolated)) {
    throw new ConnectorConfigError(
      `invalid connector configuration in ${source}: ${describeErrors(validateConnectorConfig.errors)}`,
    );
  }
  crossCheck(interpolated, source);
  return withDefaults(interpolated);
}

/** Parses configuration text: JSON when `format` is json, otherwise YAML (which also reads JSON). */
export function parseConnectorConfig(
  text: string,
  options: { format?: 'json' | 'yaml'; env?: NodeJS.ProcessEnv; source?: string } = {},
): ResolvedConnectorConfig {
  const source = options.source ?? 'the configuration';
  let document: unknown;
  try {
    document = options.format === 'json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConnectorConfigError(
      `${source} is not valid ${options.format === 'json' ? 'JSON' : 'YAML'}: ${(err as Error).message}`,
    );
  }
  return resolveConnectorConfig(document, { ...options, source });
}

/** Reads a configuration file (`.json` as JSON, anything else as YAML) with `env` (default process.env). */
export async function loadConnectorConfig(
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ResolvedConnectorConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConnectorConfigError(`cannot read the connector configuration ${file}: ${(err as Error).message}`);
  }
  return parseConnectorConfig(text, {
    format: extname(file).toLowerCase() === '.json' ? 'json' : 'yaml',
    env,
    source: file,
  });
}
