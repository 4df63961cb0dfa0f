// Precompiled Ajv validators (standalone code) for every named definition. The compiled module is CommonJS
// because Ajv's standalone output still require()s its runtime helpers (ajv #1976, #2209); a small typed ESM
// wrapper turns each function into a type guard.
import { createRequire } from 'node:module';
import type { Definitions } from './schemas.js';

const require = createRequire(import.meta.url);
const { Ajv } = require('ajv') as typeof import('ajv');
const addFormats = require('ajv-formats') as (ajv: InstanceType<typeof Ajv>) => unknown;
const standaloneCode = require('ajv/dist/standalone/index.js') as (
  ajv: InstanceType<typeof Ajv>,
  refs: Record<string, string>,
) => string;

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
  const refs = Object.fromEntries([...all.keys()].map((name) => [name, `${ROOT_ID}#/definitions/${name}`]));
  return standaloneCode(ajv, refs);
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
  lines.push(`import type { ErrorObject } from 'ajv';`);
  for (const [from, list] of [...imports].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`import type { ${list.join(', ')} } from '${from}';`);
  }
  lines.push('');
  lines.push(`/** A precompiled validator: a type guard whose \`errors\` explain the last rejection. */`);
  lines.push(`export interface Validator<T> {`);
  lines.push(`  (data: unknown): data is T;`);
  lines.push(`  errors?: ErrorObject[] | null;`);
  lines.push(`}`);
  lines.push('');
  lines.push(`const compiled = createRequire(import.meta.url)('./validators.cjs') as Record<string, Validator<unknown>>;`);
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
  lines.push('');
  lines.push(DESCRIBE_ERRORS);
  return lines.join('\n');
}

const DESCRIBE_ERRORS = `/** One line a person can read, naming each offending field, from a validator's errors. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? []).map(describeError).join('; ');
}

/** The dotted path of the field an error is about (\`metadata.latency_ms\`), or \`message\` for the whole. */
export function errorField(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  const child = error.keyword === 'required' ? p.missingProperty
    : error.keyword === 'additionalProperties' ? p.additionalProperty
    : error.keyword === 'discriminator' ? p.tag
    : undefined;
  const parts = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(String(child));
  return parts.length ? parts.join('.') : 'message';
}

/** A value as the error shows it: JSON, cut short so that a huge input never makes a huge error. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 64 ? \`\${text.slice(0, 61)}...\` : text;
}

function describeError(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  const field = errorField(error);
  switch (error.keyword) {
    case 'required':
      return \`\${field}: is required\`;
    case 'additionalProperties':
      return \`\${field}: is not a field of this message\`;
    case 'const':
      return \`\${field}: must be \${JSON.stringify(p.allowedValue)}\`;
    case 'enum':
      return \`\${field}: must be one of \${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}\`;
    case 'discriminator':
      return p.error === 'mapping'
        ? \`\${field}: \${shown(p.tagValue)} is not a message type of this endpoint\`
        : \`\${field}: is required and must be a string\`;
    case 'pattern':
      return \`\${field}: has characters that are not allowed (must match \${String(p.pattern)})\`;
    default:
      return \`\${field}: \${error.message ?? error.keyword}\`;
  }
}
`;
