// bridge-connector's command line: its flags, its --help text and its usage errors, worded as they were when commander
// read them. node:util's parseArgs only splits the arguments (non-strict, as tokens), so the errors can name the
// flag the way --help shows it; the connector's package then needs no argument parser of its own.
import { parseArgs } from 'node:util';
import { LIMITS } from '../../../generated/index.js';
import { DEFAULT_WORDS_PER_FRAGMENT } from './connector.js';

export interface CliOptions {
  config: string;
  handler: string;
  handlerTimeout?: number;
  wordsPerToken?: number;
  healthHost?: string;
  drainTimeout?: number;
}

export type CliCommand = { kind: 'run'; options: CliOptions } | { kind: 'help' } | { kind: 'version' };

/** A command line that cannot run; its message is what commander printed after `error: `. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

interface Flag {
  name: keyof CliOptions | 'help' | 'version';
  short?: string;
  /** `<file>`, `<ms>`…: the flag takes a value. */
  value?: string;
  required?: boolean;
  /** Turns the value into a number, or returns why it cannot. */
  number?: (n: number) => string | undefined;
  help: string;
}

const atLeastOne = (n: number) => (Number.isInteger(n) && n >= 1 ? undefined : 'must be a whole number, 1 or more');
const atLeastZero = (n: number) => (Number.isInteger(n) && n >= 0 ? undefined : 'must be a whole number, 0 or more');

const FLAGS: Flag[] = [
  {
    name: 'config',
    short: 'c',
    value: '<file>',
    required: true,
    help: 'connector configuration, JSON or YAML (§2.6); ${VAR} references are read from the environment',
  },
  {
    name: 'handler',
    short: 'H',
    value: '<module>',
    required: true,
    help: 'module (path from the working directory, .ts or .js) whose default export or `handle` handles each event',
  },
  {
    name: 'handlerTimeout',
    value: '<ms>',
    number: atLeastOne,
    help: 'end an unanswered event with AGENT_TIMEOUT after this long (default: the bridge timeout minus 5 s)',
  },
  {
    name: 'wordsPerToken',
    value: '<n>',
    number: atLeastOne,
    help: `words per fragment of ctx.stream() (default ${DEFAULT_WORDS_PER_FRAGMENT})`,
  },
  {
    name: 'healthHost',
    value: '<host>',
    help: 'interface of the health endpoint, over health.host of the configuration (default 127.0.0.1; 0.0.0.0 for all)',
  },
  {
    name: 'drainTimeout',
    value: '<ms>',
    number: atLeastZero,
    help: `on SIGTERM or SIGINT, let the events in flight finish for this long, then end the rest with AGENT_ERROR; 0 ends them at once, and so does a second signal (default ${LIMITS.connectorDrainTimeoutMs / 1000} s)`,
  },
  { name: 'version', short: 'v', help: 'output the version number' },
  { name: 'help', short: 'h', help: 'display help for command' },
];

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
/** `-c, --config <file>`, as --help and the errors write it. */
const term = (f: Flag) => `${f.short ? `-${f.short}, ` : ''}--${kebab(f.name)}${f.value ? ` ${f.value}` : ''}`;

const WIDTH = 80;
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

export const HELP = (() => {
  const column = Math.max(...FLAGS.map((f) => term(f).length)) + 4;
  const options = FLAGS.flatMap((f) => {
    const [first, ...rest] = wrap(f.help, WIDTH - column);
    return [`  ${term(f).padEnd(column - 2)}${first}`, ...rest.map((l) => `${' '.repeat(column)}${l}`)];
  });
  return [
    'Usage: bridge-connector [options]',
    '',
    ...wrap(
      'Agent connector: keeps one connection per configured agent to the bridge and hands each event to a handler module.',
      WIDTH,
    ),
    '',
    'Options:',
    ...options,
    '',
  ].join('\n');
})();

/** Reads the arguments (without `node` and the script). */
export function parseCliArgs(args: readonly string[]): CliCommand {
  const byName = new Map(FLAGS.map((f) => [kebab(f.name), f]));
  const options = Object.fromEntries(
    FLAGS.map((f) => [
      kebab(f.name),
      { type: f.value ? 'string' : 'boolean', ...(f.short ? { short: f.short } : {}) } as const,
    ]),
  );
  const { tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  const given: Partial<Record<Flag['name'], string | true>> = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const flag = byName.get(token.name);
    if (!flag) throw new UsageError(`unknown option '${token.rawName}'`);
    if (!flag.value) {
      if (token.value !== undefined) throw new UsageError(`option '${term(flag)}' does not take a value`);
      given[flag.name] = true;
      continue;
    }
    // A flag followed by another flag lacks its value (as with commander), rather than taking the flag as a value.
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))
      throw new UsageError(`option '${term(flag)}' argument missing`);
    given[flag.name] = token.value;
  }
  if (given.help) return { kind: 'help' };
  if (given.version) return { kind: 'version' };
  if (positionals.length)
    throw new UsageError(`too many arguments. Expected 0 arguments but got ${positionals.length}.`);
  const run: Record<string, string | number> = {};
  for (const flag of FLAGS) {
    const raw = given[flag.name];
    if (raw === undefined) {
      if (flag.required) throw new UsageError(`required option '${term(flag)}' not specified`);
      continue;
    }
    if (typeof raw !== 'string') continue;
    const problem = flag.number?.(raw.trim() === '' ? NaN : Number(raw));
    if (problem) throw new UsageError(`option '${term(flag)}' argument '${raw}' is invalid. ${problem}`);
    run[flag.name] = flag.number ? Number(raw) : raw;
  }
  return { kind: 'run', options: run as unknown as CliOptions };
}
