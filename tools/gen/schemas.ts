// Turns the two documents' component schemas into one set of named JSON Schema definitions that both Modelina
// and Ajv can read: `#/components/schemas/X` (in either file) becomes `#/definitions/X`, spec extensions are
// lifted out, and the per-direction unions are derived from the AsyncAPI operations.
import type { Schema, Specs } from './load.js';
import { openVariants } from './open.js';

export type { Schema };

export type Origin = keyof Specs;

export interface Definitions {
  /** Every named schema, sorted by name; the names are the spec's component keys. */
  all: Map<string, Schema>;
  /** Which file each name came from. */
  origin: Map<string, Origin>;
  /**
   * The open variant of every message schema, named `Open<Name>`: what the protocol itself requires, without this
   * implementation's decisions (closed objects, W5; the keywords a schema lists in `x-open`). Validators only.
   */
  open: Map<string, Schema>;
  /** The four per-direction unions, each a list of message schema names. */
  unions: Map<string, string[]>;
  /** `x-field-error-codes` of each message schema that has them. */
  fieldErrorCodes: Map<string, Record<string, string>>;
}

const LOCAL_REF = /^(?:\.\/(asyncapi|openapi|conformance)\.yaml)?#\/components\/schemas\/([A-Za-z0-9_]+)$/;

/** Who sends on which channel: an operation's action is the service's own view. */
const DIRECTIONS: Record<string, Record<string, string>> = {
  app: { receive: 'AppToServiceMessage', send: 'ServiceToAppMessage' },
  agent: { receive: 'AgentToServiceMessage', send: 'ServiceToAgentMessage' },
};

export function normalise(node: unknown, file: string): unknown {
  if (Array.isArray(node)) return node.map((n) => normalise(n, file));
  if (!node || typeof node !== 'object') return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-')) continue;
    if (key === '$ref') {
      const m = LOCAL_REF.exec(String(value));
      if (!m) throw new Error(`${file}: unsupported $ref ${String(value)} (only component schemas can be referenced)`);
      out.$ref = `#/definitions/${m[2]}`;
    } else {
      out[key] = normalise(value, file);
    }
  }
  return out;
}

function resolvePointer(tree: Schema, ref: string): Schema {
  if (!ref.startsWith('#/')) throw new Error(`unsupported $ref ${ref}`);
  return ref
    .slice(2)
    .split('/')
    .reduce((node: any, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], tree);
}

function follow(tree: Schema, node: Schema): Schema {
  let current = node;
  while (current && typeof current.$ref === 'string') current = resolvePointer(tree, current.$ref);
  return current;
}

function payloadName(tree: Schema, message: Schema): string {
  const payloadRef = message.payload?.$ref;
  const m = typeof payloadRef === 'string' ? LOCAL_REF.exec(payloadRef) : null;
  if (!m) throw new Error(`message ${message.name}: its payload must $ref a component schema`);
  return m[2]!;
}

function deriveUnions(tree: Schema): Map<string, string[]> {
  const unions = new Map<string, string[]>();
  for (const [opName, op] of Object.entries<Schema>(tree.operations ?? {})) {
    const channelKey = String(op.channel?.$ref ?? '').replace('#/channels/', '');
    const union = DIRECTIONS[channelKey]?.[op.action];
    if (!union) throw new Error(`operation ${opName}: unknown channel ${channelKey} or action ${op.action}`);
    const members = unions.get(union) ?? [];
    for (const ref of op.messages ?? []) {
      const name = payloadName(tree, follow(tree, ref));
      if (!members.includes(name)) members.push(name);
    }
    unions.set(union, members);
  }
  for (const members of unions.values()) members.sort();
  return new Map([...unions].sort(([a], [b]) => a.localeCompare(b)));
}

export function collectDefinitions(specs: Specs): Definitions {
  const all = new Map<string, Schema>();
  const origin = new Map<string, Origin>();
  const fieldErrorCodes = new Map<string, Record<string, string>>();
  for (const kind of ['asyncapi', 'openapi', 'conformance'] as const) {
    const source = specs[kind];
    for (const [name, schema] of Object.entries<Schema>(source.tree.components?.schemas ?? {})) {
      if (all.has(name))
        throw new Error(`schema ${name} is defined in both ${origin.get(name)}.yaml and ${source.file}`);
      if (schema.title !== name) throw new Error(`${source.file}: schema ${name} must have title: ${name}`);
      all.set(name, normalise(schema, source.file) as Schema);
      origin.set(name, kind);
      if (schema['x-field-error-codes']) fieldErrorCodes.set(name, schema['x-field-error-codes']);
    }
  }
  const unions = deriveUnions(specs.asyncapi.tree);
  for (const [union, members] of unions) {
    all.set(union, {
      title: union,
      description: `Every message of this direction, discriminated by \`type\`.`,
      type: 'object',
      discriminator: { propertyName: 'type' },
      oneOf: members.map((m) => ({ $ref: `#/definitions/${m}` })),
    });
    origin.set(union, 'asyncapi');
  }
  const sorted = new Map([...all].sort(([a], [b]) => a.localeCompare(b)));
  const unionSchemas = new Map([...unions.keys()].map((u) => [u, all.get(u)!]));
  const open = openVariants(
    specs.asyncapi.tree.components?.schemas ?? {},
    unionSchemas,
    (node) => normalise(node, specs.asyncapi.file) as Schema,
  );
  return { all: sorted, origin, open, unions, fieldErrorCodes };
}

/** The `type` constant of each union member, in member order. */
export function memberTypes(defs: Definitions, union: string): string[] {
  return (defs.unions.get(union) ?? []).map((m) => String(defs.all.get(m)?.properties?.type?.const));
}
