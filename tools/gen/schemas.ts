// Turns the two documents' component schemas into one set of named JSON Schema definitions that both Modelina
// and Ajv can read: `#/components/schemas/X` (in either file) becomes `#/definitions/X`, spec extensions are
// lifted out, and the per-direction unions are derived from the AsyncAPI operations. The schemas marked
// `x-internal` (the bus between the nodes of one bridge, O16) are kept apart: a module of their own, no open
// variant, and no client message may refer to them.
import type { Schema, Specs } from './load.js';
import { openVariants } from './open.js';

export type { Schema };

/** Which file a name came from, or `bus`: an `x-internal` schema of the AsyncAPI document (generated/bus.ts). */
export type Origin = keyof Specs | 'bus';

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
  /** The four per-direction unions of the client endpoints, each a list of message schema names. */
  unions: Map<string, string[]>;
  /** The unions of the internal channels (the bus between nodes), each a list of message schema names. */
  internalUnions: Map<string, string[]>;
  /** `x-field-error-codes` of each message schema that has them. */
  fieldErrorCodes: Map<string, Record<string, string>>;
}

const LOCAL_REF = /^(?:\.\/(asyncapi|openapi|conformance)\.yaml)?#\/components\/schemas\/([A-Za-z0-9_]+)$/;

/**
 * Who sends on which channel (an operation's action is the service's own view; on the bus, a node's), and the
 * property that tells a channel's messages apart: `type` on the client endpoints, the short `k` on the bus.
 */
const CHANNELS: Record<string, { receive: string; send: string; tag: string }> = {
  app: { receive: 'AppToServiceMessage', send: 'ServiceToAppMessage', tag: 'type' },
  agent: { receive: 'AgentToServiceMessage', send: 'ServiceToAgentMessage', tag: 'type' },
  bus: { receive: 'BusMessage', send: 'BusMessage', tag: 'k' },
};

/** The property each union's members are told apart by. */
export function tagOf(union: string): string {
  return Object.values(CHANNELS).find((c) => c.receive === union || c.send === union)?.tag ?? 'type';
}

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
    } else if (key === 'discriminator' && typeof value === 'string') {
      out.discriminator = { propertyName: value }; // AsyncAPI names the property; Ajv wants an object
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

/** The channels marked `x-internal`: between the nodes of one bridge, not for clients. */
export function internalChannels(tree: Schema): Set<string> {
  return new Set(
    Object.entries<Schema>(tree.channels ?? {})
      .filter(([, channel]) => channel['x-internal'] === true)
      .map(([name]) => name),
  );
}

interface Union {
  members: string[];
  channel: string;
}

function deriveUnions(tree: Schema): Map<string, Union> {
  const unions = new Map<string, Union>();
  for (const [opName, op] of Object.entries<Schema>(tree.operations ?? {})) {
    const channel = String(op.channel?.$ref ?? '').replace('#/channels/', '');
    const action = String(op.action);
    const union = action === 'send' || action === 'receive' ? CHANNELS[channel]?.[action] : undefined;
    if (!union) throw new Error(`operation ${opName}: unknown channel ${channel} or action ${action}`);
    const members: string[] = unions.get(union)?.members ?? [];
    for (const ref of op.messages ?? []) {
      const name = payloadName(tree, follow(tree, ref));
      if (!members.includes(name)) members.push(name);
    }
    unions.set(union, { members, channel });
  }
  for (const { members } of unions.values()) members.sort();
  return new Map([...unions].sort(([a], [b]) => a.localeCompare(b)));
}

/** The `$ref` names anywhere in `node`. */
function refsIn(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => refsIn(n, found));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref') found.add(String(value).replace('#/definitions/', ''));
      else refsIn(value, found);
    }
  }
  return found;
}

/** A client's message must never depend on the bus: the bus may change with any release, the protocol may not. */
function checkInternalApart(all: Map<string, Schema>, origin: Map<string, Origin>): void {
  for (const [name, schema] of all) {
    if (origin.get(name) === 'bus') continue;
    const internal = [...refsIn(schema)].filter((ref) => origin.get(ref) === 'bus');
    if (internal.length) throw new Error(`schema ${name} refers to the x-internal ${internal.join(', ')}`);
  }
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
      if (schema['x-internal'] === true && kind !== 'asyncapi')
        throw new Error(`${source.file}: schema ${name} is x-internal, which only asyncapi.yaml's bus schemas are`);
      all.set(name, normalise(schema, source.file) as Schema);
      origin.set(name, schema['x-internal'] === true ? 'bus' : kind);
      if (schema['x-field-error-codes']) fieldErrorCodes.set(name, schema['x-field-error-codes']);
    }
  }
  const internal = internalChannels(specs.asyncapi.tree);
  const unions = new Map<string, string[]>();
  const internalUnions = new Map<string, string[]>();
  for (const [union, { members, channel }] of deriveUnions(specs.asyncapi.tree)) {
    const onInternal = internal.has(channel);
    const tag = tagOf(union);
    all.set(union, {
      title: union,
      description: onInternal
        ? `Every message between the nodes of one bridge (internal), discriminated by \`${tag}\`.`
        : `Every message of this direction, discriminated by \`${tag}\`.`,
      type: 'object',
      discriminator: { propertyName: tag },
      oneOf: members.map((m) => ({ $ref: `#/definitions/${m}` })),
    });
    origin.set(union, onInternal ? 'bus' : 'asyncapi');
    for (const m of members) {
      if ((origin.get(m) === 'bus') !== onInternal)
        throw new Error(`${union}: message ${m} must be x-internal exactly when its channel is`);
    }
    (onInternal ? internalUnions : unions).set(union, members);
  }
  checkInternalApart(all, origin);
  const sorted = new Map([...all].sort(([a], [b]) => a.localeCompare(b)));
  const unionSchemas = new Map([...unions.keys()].map((u) => [u, all.get(u)!]));
  const clientSchemas = Object.entries<Schema>(specs.asyncapi.tree.components?.schemas ?? {}).filter(
    ([name]) => origin.get(name) !== 'bus',
  );
  const open = openVariants(
    Object.fromEntries(clientSchemas),
    unionSchemas,
    (node) => normalise(node, specs.asyncapi.file) as Schema,
  );
  return { all: sorted, origin, open, unions, internalUnions, fieldErrorCodes };
}

/** The discriminating constant (`type`, on the bus `k`) of each union member, in member order. */
export function memberTypes(defs: Definitions, union: string): string[] {
  const tag = tagOf(union);
  const members = defs.unions.get(union) ?? defs.internalUnions.get(union) ?? [];
  return members.map((m) => String(defs.all.get(m)?.properties?.[tag]?.const));
}
