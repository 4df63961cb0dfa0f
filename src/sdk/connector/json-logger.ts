// bridge-connector's log: one JSON object per line, `{"level", "time", "name", ...fields, "msg"}`, as pino wrote it
// before, so that the connector's package needs no logging library. An error (`err`, or any field holding one) is
// written as its type, message, code and stack, never as its other properties, which may hold a request, a
// configuration or a token; and a token's secret is masked wherever it appears in the line.
import type { Logger } from '../../shared/logger.js';

const RANKS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity } as const;
export type LogLevel = keyof typeof RANKS;
export const LOG_LEVELS = Object.keys(RANKS) as LogLevel[];

/** `rla_{id}_{secret}` / `rlk_{id}_{secret}`: the secret goes, the owner stays, so the line still says whose it was. */
const TOKEN_SECRET = /\b(rl[ak]_[A-Za-z0-9-]+_)[A-Za-z0-9]{8,}/g;
/** Fields whose whole value is a credential. */
const SECRET_FIELDS = new Set(['token', 'authorization']);

export interface JsonLoggerOptions {
  /** One of LOG_LEVELS; default info. */
  level?: string;
  name?: string;
  /** Where each line goes; default stderr. */
  write?: (line: string) => void;
  now?: () => number;
}

export function isLogLevel(level: string): level is LogLevel {
  return Object.hasOwn(RANKS, level);
}

function errorFields(err: Error): Record<string, unknown> {
  const code = (err as { code?: unknown }).code;
  return { type: err.name, message: err.message, ...(code !== undefined ? { code } : {}), stack: err.stack };
}

function rendered(key: string, value: unknown): unknown {
  if (SECRET_FIELDS.has(key.toLowerCase()) && value !== undefined) return '***';
  if (value instanceof Error) return errorFields(value);
  if (key === 'err' && value !== undefined) return { message: String(value) };
  return value;
}

export function jsonLogger(o: JsonLoggerOptions = {}): Logger {
  const level = o.level || 'info';
  if (!isLogLevel(level)) throw new RangeError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got ${level}`);
  const threshold = RANKS[level];
  const write = o.write ?? ((line: string) => process.stderr.write(line));
  const now = o.now ?? Date.now;
  const line = (at: Exclude<LogLevel, 'silent'>) => (fields: object, msg: string) => {
    if (RANKS[at] < threshold) return;
    const own: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields)) {
      if (key !== 'level' && key !== 'time' && key !== 'name' && key !== 'msg') own[key] = rendered(key, value);
    }
    const entry = { level: at, time: new Date(now()).toISOString(), ...(o.name ? { name: o.name } : {}), ...own, msg };
    let text: string;
    try {
      text = JSON.stringify(entry);
    } catch (err) {
      // A field that cannot be written (a cycle, a BigInt) must not lose the line, nor throw into the caller.
      text = JSON.stringify({
        level: at,
        time: entry.time,
        ...(o.name ? { name: o.name } : {}),
        msg,
        unwritable: (err as Error).message,
      });
    }
    write(`${text.replace(TOKEN_SECRET, '$1***')}\n`);
  };
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}
