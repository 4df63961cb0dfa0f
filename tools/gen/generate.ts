// The whole pipeline from the loaded specs to the files of generated/, in memory. Pure apart from Modelina
// and Ajv, so `gen` and `gen:check` produce byte-identical output from the same input.
import { readFileSync } from 'node:fs';
import type { Specs } from './load.js';
import { collectDefinitions, type Definitions, type Origin, type Schema } from './schemas.js';
import { generateModels } from './types.js';
import { compileValidators, validatorWrapper } from './validators.js';
import { catalogueModule } from './catalogue.js';
import { busConstants } from './bus.js';
import { withHeaders, type Files } from './emit.js';

/** The helpers the generated modules use at run time: a real module in tools/gen/, copied verbatim. */
const RUNTIME = readFileSync(new URL('./runtime.ts', import.meta.url), 'utf8');

/** The one version of every package (package.json at the root): what `--version`, /healthz and reports show. */
function versionModule(): string {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return [
    `/** The version of this project's packages (protocol, client, conformance, server), released together: package.json's. */`,
    `export const VERSION = ${JSON.stringify(version)};`,
  ].join('\n');
}

/**
 * Every named schema as one JSON Schema (draft-07) document, for implementations in other languages: the closed
 * schemas of this implementation and, prefixed `Open`, what the protocol itself requires of a message.
 */
function schemaDocument(defs: Definitions, header: string): string {
  const definitions = Object.fromEntries([...defs.all, ...defs.open].sort(([a], [b]) => a.localeCompare(b)));
  const document = {
    $comment: header,
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'agent-messaging-bridge',
    definitions,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

const MODULE_OF = {
  asyncapi: './messages.js',
  openapi: './http.js',
  conformance: './conformance.js',
  bus: './bus.js',
} as const;

function withoutComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, '');
}

/**
 * What the suite assumes of a target that says nothing: for every TargetSettings key, the x-limits value its
 * `x-default` names (this implementation's default), so no number is written twice.
 */
function settingsDefaults(specs: Specs): string {
  const properties = specs.conformance.tree.components.schemas.TargetSettings?.properties ?? {};
  const limits = specs.asyncapi.tree['x-limits'] ?? {};
  const defaults = Object.fromEntries(
    Object.entries<Schema>(properties).map(([key, p]) => {
      const limit = limits[p['x-default']]?.value;
      if (typeof limit !== 'number')
        throw new Error(
          `conformance.yaml: TargetSettings.${key} needs x-default naming an x-limits entry of asyncapi.yaml`,
        );
      return [key, limit];
    }),
  );
  return `/** What the conformance suite assumes of a target whose --settings leave a key out. */\nexport const TARGET_SETTINGS_DEFAULTS: Required<TargetSettings> = ${JSON.stringify(defaults, null, 2)};\n`;
}

/**
 * Each scenario step kind (the step's only key) with the schema of such a step, read from ScenarioStep's oneOf, so
 * the loader validates a step against its own kind's schema (an error naming its field, not sixteen mismatches).
 */
function scenarioStepSchemas(specs: Specs): string {
  const schemas = specs.conformance.tree.components.schemas;
  const kinds = (schemas.ScenarioStep?.oneOf ?? []).map((member: Schema) => {
    const name = String(member.$ref).split('/').pop()!;
    const keys: string[] = schemas[name]?.required ?? [];
    if (keys.length !== 1)
      throw new Error(`conformance.yaml: step schema ${name} must require exactly one key, its kind`);
    return [keys[0], name];
  });
  return `/** Each scenario step kind (its only key) and the name of the schema (and validator) of such a step. */\nexport const SCENARIO_STEP_SCHEMAS = ${JSON.stringify(Object.fromEntries(kinds), null, 2)} as const;\n`;
}

const BOUND_KEYWORDS = ['minLength', 'maxLength', 'minimum', 'maximum', 'maxItems', 'pattern', 'default'] as const;

/** The keywords of `schema` that bound a value (lengths, range, list length, pattern, default), or undefined when it has none. */
function boundsOf(schema: Schema | undefined): Record<string, unknown> | undefined {
  const found = BOUND_KEYWORDS.filter((k) => schema?.[k] !== undefined).map((k) => [k, schema![k]]);
  return found.length ? Object.fromEntries(found) : undefined;
}

/**
 * The HTTP document's bounds that code needs as numbers: each query parameter's, by operationId (the generated
 * validators cover bodies, not query strings), and each request or response field's, by schema (for the
 * dashboard's forms), so no hand-written code restates them.
 */
function httpBounds(specs: Specs): string {
  const tree = specs.openapi.tree;
  const query: Record<string, Record<string, unknown>> = {};
  for (const item of Object.values<Schema>(tree.paths ?? {})) {
    for (const op of Object.values<Schema>(item)) {
      const params = (op?.parameters ?? []).filter((p: Schema) => p.in === 'query' && boundsOf(p.schema));
      if (params.length)
        query[op.operationId] = Object.fromEntries(params.map((p: Schema) => [p.name, boundsOf(p.schema)]));
    }
  }
  const fields: Record<string, Record<string, unknown>> = {};
  for (const [name, schema] of Object.entries<Schema>(tree.components?.schemas ?? {})) {
    const bounded = Object.entries<Schema>(schema.properties ?? {}).filter(([, p]) => boundsOf(p));
    if (bounded.length) fields[name] = Object.fromEntries(bounded.map(([key, p]) => [key, boundsOf(p)]));
  }
  return [
    `/** Bounds of the admin API's query parameters (type-checked there, not by a generated validator), by operationId. */`,
    `export const QUERY_PARAMETERS = ${JSON.stringify(query, null, 2)} as const;`,
    '',
    `/** Bounds of the HTTP schemas' fields stated inline (lengths, ranges, patterns, defaults), by schema. */`,
    `export const FIELD_BOUNDS = ${JSON.stringify(fields, null, 2)} as const;`,
    '',
  ].join('\n');
}

export async function generate(specs: Specs): Promise<Files> {
  const defs = collectDefinitions(specs);
  const models = await generateModels(defs, [...defs.all.keys()]);
  for (const name of models.keys()) {
    if (!defs.all.has(name))
      throw new Error(`a schema without a title was rendered as ${name}: give every schema a name`);
  }
  const typeModule = (name: string): string | undefined =>
    models.has(name) ? MODULE_OF[defs.origin.get(name)!] : undefined;
  const bodyOf = (origin: Origin): string =>
    [...models.values()]
      .filter((m) => defs.origin.get(m.name) === origin)
      .map((m) => m.code)
      .join('\n');

  // The HTTP and conformance documents, and the bus, $ref the protocol's schemas: their modules import those types.
  const withMessageImports = (code: string): string => {
    const used = [...models.keys()].filter(
      (name) => defs.origin.get(name) === 'asyncapi' && new RegExp(`\\b${name}\\b`).test(withoutComments(code)),
    );
    return used.length ? `import type { ${used.join(', ')} } from './messages.js';\n\n${code}` : code;
  };
  const messages = bodyOf('asyncapi');
  const http = withMessageImports(bodyOf('openapi'));

  const files: Files = new Map([
    [
      'bus.ts',
      withMessageImports(`${bodyOf('bus')}\n${busConstants(defs, specs.asyncapi.tree.components?.schemas ?? {})}`),
    ],
    ['catalogue.ts', catalogueModule(specs.asyncapi.tree, defs)],
    [
      'conformance.ts',
      withMessageImports(`${bodyOf('conformance')}\n${settingsDefaults(specs)}\n${scenarioStepSchemas(specs)}`),
    ],
    ['http.ts', `${http}\n${httpBounds(specs)}`],
    [
      'index.ts',
      ['messages', 'http', 'conformance', 'catalogue', 'validators', 'runtime', 'version', 'bus']
        .map((m) => `export * from './${m}.js';`)
        .join('\n'),
    ],
    ['messages.ts', messages],
    ['runtime.ts', RUNTIME],
    ['validators.cjs', compileValidators(defs)],
    ['validators.ts', validatorWrapper(defs, typeModule)],
    ['version.ts', versionModule()],
  ]);
  const headed = withHeaders(
    files,
    [specs.asyncapi, specs.openapi, specs.conformance].map((s) => ({ file: s.file, text: s.text })),
  );
  const header = headed
    .get('version.ts')!
    .split('\n')
    .slice(0, 2)
    .map((line) => line.slice(3))
    .join(' ');
  return headed.set('schemas.json', schemaDocument(defs, header)); // JSON has no comments: the header is its $comment
}
