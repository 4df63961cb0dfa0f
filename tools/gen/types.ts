// TypeScript declarations from the named definitions, through Modelina. Its defaults are tuned here so that the
// output reads like the spec: interfaces named by the schema titles, wire field names untouched, `type` constants
// as literal types (so `switch (msg.type)` narrows), opaque objects as records.
import { TypeScriptGenerator, TS_DESCRIPTION_PRESET } from '@asyncapi/modelina';
import type { Definitions, Schema } from './schemas.js';

const generator = new TypeScriptGenerator({
  modelType: 'interface',
  enumType: 'union',
  mapType: 'record',
  rawPropertyNames: true,
  presets: [TS_DESCRIPTION_PRESET],
  processorOptions: { jsonSchema: { ignoreAdditionalProperties: true } },
  constraints: {
    // The default only renders string constants; `done: true` must stay the literal `true`.
    constant: ({ constrainedMetaModel }: any) => {
      const constant = constrainedMetaModel.options.const;
      return constant ? JSON.stringify(constant.originalInput) : undefined;
    },
  },
});

/** An open object with declared properties would otherwise gain a bogus `additionalProperties` member. */
function forModelina(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(forModelina);
  if (!node || typeof node !== 'object') return node;
  // Draft-07 ignores a $ref's siblings; Modelina would merge them into the referenced model instead.
  if ('$ref' in node) return { $ref: (node as Schema).$ref };
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'additionalProperties' && value === true && (node as Schema).properties) continue;
    if (key === 'discriminator' || key === 'examples') continue;
    out[key] = forModelina(value);
  }
  return out;
}

export interface Model {
  name: string;
  code: string;
}

/** One model per named schema that Modelina renders as a declaration, sorted by name. */
export async function generateModels(defs: Definitions, names: string[]): Promise<Map<string, Model>> {
  const definitions = forModelina(Object.fromEntries(defs.all)) as Schema;
  const models = new Map<string, Model>();
  for (const name of names) {
    const root = { $schema: 'http://json-schema.org/draft-07/schema#', ...(definitions[name] as Schema), definitions };
    for (const output of await generator.generate(root)) {
      const code = `${output.result.trim().replace(/^(interface|type) /m, 'export $1 ')}\n`;
      const seen = models.get(output.modelName);
      if (seen && seen.code !== code)
        throw new Error(`Modelina rendered ${output.modelName} twice, differently:\n${seen.code}\n---\n${code}`);
      models.set(output.modelName, { name: output.modelName, code });
    }
  }
  return new Map([...models].sort(([a], [b]) => a.localeCompare(b)));
}
