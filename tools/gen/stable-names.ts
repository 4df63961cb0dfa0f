// Ajv numbers the module-level names of its standalone code (validate22, schema7, pattern0, func2) in the order it
// compiled them, and writes each validator where a walk of the exports first needs it: one new field renumbered
// and moved thousands of lines of generated/validators.cjs. This pass names each module-level value after what it
// holds and orders the module by those names, so a spec change's diff is the code of the definitions it changed.
// The names inside a function (_errs1, valid0, i0) stay as they are: Ajv numbers them per function already.
import { significant, statements, text, type Statement } from './statements.js';

/** Values that belong to the first validator that uses them (a pattern), rather than shared helpers. */
const OWNED_BY_FIRST_USER = new Set(['pattern']);

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const prefixOf = (name: string): string => name.replace(/\d+$/, '');

/** The names a statement uses of `declared`, in order of appearance, without the one it declares. */
function uses(statement: Statement, declared: ReadonlyMap<string, Statement>): string[] {
  const tokens = significant(statement.tokens);
  const found = tokens.filter(
    (t, i) => t.kind === 'name' && tokens[i - 1]?.text !== '.' && declared.has(t.text) && t.text !== statement.declares,
  );
  return [...new Set(found.map((t) => t.text))];
}

/** What a shared helper is, from its value: `require("ajv/dist/runtime/ucs2length").default` -> `ucs2length`. */
function helperSlug(statement: Statement): string {
  const tokens = significant(statement.tokens);
  const value = tokens.slice(tokens.findIndex((t) => t.text === '=') + 1);
  const last = value.filter((t) => (t.kind === 'name' && t.text !== 'default') || t.kind === 'string').pop();
  const word =
    last?.kind === 'string'
      ? (JSON.parse(last.text.replace(/^'|'$/g, '"')) as string).split('/').pop()!
      : (last?.text ?? 'value');
  return word.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '') || 'value';
}

/**
 * `owners` maps Ajv's name of each validator function and of each validator's schema constant (`validate22`,
 * `schema7`) to the definition it belongs to (`AcceptedMessage`); every function must have one. The result:
 * `validate_AcceptedMessage`, `schema_AcceptedMessage`, `pattern_EventId` (the first validator using it),
 * `wrapper_RepeatArgs` (it wraps that validator), `func_ucs2length` (a helper, for what it is); then the helpers
 * sorted by name, and per definition, sorted by name, its export, its constants and its function.
 */
export function stableNames(code: string, owners: ReadonlyMap<string, string>): string {
  const all = statements(code);
  const declared = new Map(all.filter((s) => s.declares).map((s) => [s.declares!, s]));
  const owner = new Map<string, string>();
  const renamed = new Map<string, string>();
  const taken = new Set<string>();
  const claim = (name: string, base: string): void => {
    let candidate = base;
    for (let n = 2; taken.has(candidate); n++) candidate = `${base}_${n}`;
    taken.add(candidate);
    renamed.set(name, candidate);
  };
  const own = (name: string, definition: string): void => {
    owner.set(name, definition);
    claim(name, `${prefixOf(name)}_${definition}`);
  };

  for (const s of all) if (s.declares && owners.has(s.declares)) own(s.declares, owners.get(s.declares)!);
  for (const s of all) {
    if (s.kind === 'function' && !owner.has(s.declares!))
      throw new Error(`${s.declares} validates no named definition`);
  }
  for (const s of all) {
    const wrapped =
      s.kind === 'const' && !owner.has(s.declares!) ? uses(s, declared).find((n) => owner.has(n)) : undefined;
    if (wrapped) own(s.declares!, owner.get(wrapped)!);
  }
  for (const s of all.filter((f) => f.kind === 'function')) {
    for (const used of uses(s, declared)) {
      if (!owner.has(used) && OWNED_BY_FIRST_USER.has(prefixOf(used))) own(used, owner.get(s.declares!)!);
    }
  }
  for (const s of all)
    if (s.declares && !renamed.has(s.declares)) claim(s.declares, `${prefixOf(s.declares)}_${helperSlug(s)}`);

  const present = new Set(all.flatMap((s) => s.tokens.filter((t) => t.kind === 'name').map((t) => t.text)));
  for (const [from, to] of renamed) {
    if (present.has(to) && !renamed.has(to))
      throw new Error(`renaming ${from} to ${to} would clash with a name of the Ajv code`);
  }
  return ordered(all, declared, owner, renamed);
}

const RANK: Record<Statement['kind'], number> = { export: 0, const: 1, function: 2, other: 3 };

function ordered(
  all: Statement[],
  declared: ReadonlyMap<string, Statement>,
  owner: ReadonlyMap<string, string>,
  renamed: ReadonlyMap<string, string>,
): string {
  const prologue: string[] = [];
  const helpers: [string, string][] = [];
  const groups = new Map<string, [Statement, string][]>();
  for (const s of all) {
    const body = renamedText(s, renamed);
    const first = s.declares ?? uses(s, declared)[0];
    if (first === undefined) prologue.push(body);
    else if (!owner.has(first)) helpers.push([renamed.get(first)!, body]);
    else groups.set(owner.get(first)!, [...(groups.get(owner.get(first)!) ?? []), [s, body]]);
  }
  const sections = [[...prologue, ...helpers.sort(([a], [b]) => byCodeUnits(a, b)).map(([, body]) => body)].join('\n')];
  for (const definition of [...groups.keys()].sort(byCodeUnits)) {
    const group = groups.get(definition)!.map(([s, body], i) => ({ rank: RANK[s.kind], i, body }));
    sections.push(
      group
        .sort((a, b) => a.rank - b.rank || a.i - b.i)
        .map((g) => g.body)
        .join('\n'),
    );
  }
  return `${sections.join('\n\n')}\n`;
}

function renamedText(statement: Statement, renamed: ReadonlyMap<string, string>): string {
  let previous = '';
  return text(
    statement.tokens.map((t) => {
      const to = t.kind === 'name' && previous !== '.' ? renamed.get(t.text) : undefined;
      if (t.kind !== 'space' && t.kind !== 'comment') previous = t.text;
      return to ? { ...t, text: to } : t;
    }),
  );
}
