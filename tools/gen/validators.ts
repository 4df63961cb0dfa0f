// Precompiled Ajv validators (standalone code) for every named definition. The compiled module is CommonJS
// because Ajv's standalone output require()s its runtime helpers (ajv #1976, #2209); those helpers are inlined
// into it (see inlineRuntime), so the protocol needs no package at run time. A small typed ESM wrapper turns each
// function into a type guard. The Validator type and describeErrors live in runtime.ts. Each definition compiles to
// one function, named after it (stable-names.ts), so a spec change's diff in the module is the change.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Definitions } from './schemas.js';
import { stableNames } from './stable-names.js';

const require = createRequire(import.meta.url);
const { Ajv } = require('ajv') as typeof import('ajv');
const addFormats = require('ajv-formats') as (ajv: InstanceType<typeof Ajv>) => unknown;
const standaloneCode = require('ajv/dist/standalone/index.js') as (
  ajv: InstanceType<typeof Ajv>,
  refs: Record<string, string>,
) => string;
const { resolveRef, SchemaEnv } = require('ajv/dist/compile/index.js') as typeof import('ajv/dist/compile/index.js');
type Compiler = InstanceType<typeof Ajv>;

const ROOT_ID = 'bridge';

/** The CommonJS module with one exported validate function per definition name. */
export function compileValidators(defs: Definitions): string {
  const ajv = new Ajv({
    strict: true,
    discriminator: true,
    unicodeRegExp: true,
    inlineRefs: false, // shared sub-schemas (ids, payload) compile once instead of once per message
    code: { source: true, esm: false, lines: true },
  });
  addFormats(ajv);
  const all = validated(defs);
  ajv.addSchema({ $id: ROOT_ID, definitions: withoutAnnotations(Object.fromEntries(all)) });
  const owners = compileEach(ajv, [...all.keys()]);
  const refs = Object.fromEntries([...all.keys()].map((name) => [name, refOf(name)]));
  return inlineRuntime(stableNames(standaloneCode(ajv, refs), owners));
}

const refOf = (name: string): string => `${ROOT_ID}#/definitions/${name}`;

/**
 * Compiles each definition once, as the `$ref`s to it reach it, and makes that the function its export names too:
 * left to itself, `ajv.getSchema` compiles a second copy of every definition another one refers to. Returns the
 * definition each validator function and each validator's schema constant belongs to, by Ajv's name for it.
 */
function compileEach(ajv: Compiler, names: string[]): Map<string, string> {
  const root = ajv.schemas[ROOT_ID]!;
  const owners = new Map<string, string>();
  for (const name of names) {
    const env = resolveRef.call(ajv, root, root.baseId, `#/definitions/${name}`);
    if (!(env instanceof SchemaEnv) || !env.validate?.source)
      throw new Error(`Ajv did not compile ${name} to a function of its own`);
    ajv.refs[refOf(name)] = env;
    const schema = ajv.scope.getValue('schema', env.schema);
    for (const value of [env.validate.source.validateName, schema]) {
      if (value && !owners.has(value.str)) owners.set(value.str, name);
    }
  }
  return owners;
}

/**
 * The runtime modules Ajv's standalone code may require, each self-contained (it requires nothing itself). Their
 * text is embedded as it ships in the installed ajv and ajv-formats (MIT), which keeps the generated validators free
 * of both packages at run time: an app or agent installs neither.
 */
const RUNTIME_MODULES = ['ajv/dist/runtime/ucs2length', 'ajv-formats/dist/formats'];

/** Replaces each `require("m")` of `code` by a module embedded in front of it; an unknown `m` fails the generator. */
export function inlineRuntime(code: string): string {
  const used = new Set<string>();
  const body = code.replace(/\brequire\("([^"]+)"\)/g, (_, name: string) => {
    if (!RUNTIME_MODULES.includes(name)) {
      throw new Error(
        `the Ajv standalone code requires ${name}: add it to RUNTIME_MODULES in tools/gen/validators.ts if it requires nothing itself`,
      );
    }
    used.add(name);
    return `runtime(${JSON.stringify(name)})`;
  });
  const modules = [...used].sort().map((name) => {
    // `f.code = 'require(…)'` tells Ajv's compiler how to reach the helper: no use at run time, and not a require.
    const text = readFileSync(require.resolve(name), 'utf8')
      .replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n')
      .replace(/^.*\.code = 'require\([^']*'.*\n/gm, '');
    if (/\brequire\(/.test(text)) throw new Error(`${name} requires another module: it cannot be inlined`);
    return `  ${JSON.stringify(name)}: (module, exports) => {\n${text.trimEnd()}\n  },`;
  });
  return [
    '"use strict";',
    "// Ajv's runtime helpers that the validators below use, embedded from ajv and ajv-formats (MIT licence).",
    'const runtimeModules = {',
    ...modules,
    '};',
    'const runtimeCache = {};',
    'function runtime(name) {',
    '  if (!runtimeCache[name]) {',
    '    const module = { exports: {} };',
    '    runtimeModules[name](module, module.exports);',
    '    runtimeCache[name] = module.exports;',
    '  }',
    '  return runtimeCache[name];',
    '}',
    body,
  ].join('\n');
}

/** Every schema that gets a validator: the named definitions and their open variants. */
function validated(defs: Definitions): Map<string, unknown> {
  return new Map([...defs.all, ...defs.open]);
}

/** Ajv embeds every schema it compiles; prose and examples would only make the module larger. */
function withoutAnnotations(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutAnnotations);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !(ANNOTATIONS.has(key) && typeof value !== 'object') && key !== 'examples')
      .map(([key, value]) => [key, withoutAnnotations(value)]),
  );
}

const ANNOTATIONS = new Set(['title', 'description']);

/** The typed ESM face of the compiled module: `validateX(data): data is X` for every definition. */
export function validatorWrapper(defs: Definitions, typeModule: (name: string) => string | undefined): string {
  const names = [...validated(defs).keys()];
  const imports = new Map<string, string[]>();
  for (const name of names) {
    const from = typeModule(name);
    if (from) imports.set(from, [...(imports.get(from) ?? []), name]);
  }
  const lines: string[] = [];
  lines.push(`import { createRequire } from 'node:module';`);
  lines.push(`import type { Validator } from './runtime.js';`);
  for (const [from, list] of [...imports].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`import type { ${list.join(', ')} } from '${from}';`);
  }
  lines.push('');
  lines.push(
    `const compiled = createRequire(import.meta.url)('./validators.cjs') as Record<string, Validator<unknown>>;`,
  );
  lines.push('');
  for (const name of names) {
    const type = typeModule(name) ? name : 'unknown';
    lines.push(`export const validate${name} = compiled.${name} as Validator<${type}>;`);
  }
  lines.push('');
  lines.push(`/** Every validator by the name of its schema. */`);
  lines.push(`export const validators = {`);
  for (const name of names) lines.push(`  ${name}: validate${name},`);
  lines.push(`} as const;`);
  return lines.join('\n');
}
