// The schema side of the robustness generator: which messages a client sends (from the generated `Open…ToService`
// unions, the resume extension left out), a valid instance of each (its schema's example, ids as placeholders), and
// for each field what the schema does not accept (wrong JSON types, pattern, const and enum violations).
import type { ClientKind } from '../../generated/index.js';
import { deref, refName, type Schema, type SpecModel } from './spec-model.js';

export type Endpoint = ClientKind;
export type JsonType = 'number' | 'string' | 'boolean' | 'null' | 'array' | 'object';

export const JSON_TYPES: readonly JsonType[] = ['number', 'string', 'boolean', 'null', 'array', 'object'];
const SAMPLES: Record<JsonType, unknown> = {
  number: 42,
  string: 'x',
  boolean: true,
  null: null,
  array: [],
  object: {},
};

/** Ids the runner fills in: an id property of a base message becomes its placeholder. */
const PLACEHOLDERS: Record<string, string> = { OpenEventId: '${event_id}', OpenAgentId: '${agent_id}' };

export interface ClientMessage {
  endpoint: Endpoint;
  /** The `type` const: event, discover, ping, token, reply, error. */
  type: string;
  /** The definition names, open (the protocol's reading) and closed (ours, W5). */
  open: string;
  closed: string;
  schema: Schema;
  /** A valid instance, ids as placeholders. */
  base: Record<string, unknown>;
}

export function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  return t === 'number' || t === 'string' || t === 'boolean' ? t : 'object';
}

/** Every message a client sends to the service on `endpoint`, in the union's order; extension messages left out. */
export function clientMessages(model: SpecModel, endpoint: Endpoint): ClientMessage[] {
  const union = model.definitions[endpoint === 'app' ? 'OpenAppToServiceMessage' : 'OpenAgentToServiceMessage'];
  if (!union?.oneOf) throw new Error(`schemas.json: no ${endpoint}-to-service union`);
  const out: ClientMessage[] = [];
  for (const member of union.oneOf) {
    const open = refName(member) ?? '';
    const schema = deref(model, member);
    if (/\bextension\b/i.test(schema.description ?? '')) continue;
    const type = schema.properties?.type?.const;
    if (typeof type !== 'string') throw new Error(`schemas.json: ${open} has no type const`);
    const example = (schema.examples?.[0] ?? { type }) as Record<string, unknown>;
    const base: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(example)) {
      const ref = refName(schema.properties?.[field] ?? {});
      base[field] = (ref && PLACEHOLDERS[ref]) ?? value;
    }
    out.push({ endpoint, type, open, closed: open.replace(/^Open/, ''), schema, base });
  }
  return out;
}

/** The JSON types a property's schema accepts (all six when it names none). */
export function acceptedTypes(model: SpecModel, property: Schema): Set<JsonType> {
  const s = deref(model, property);
  if (s.const !== undefined) return new Set([jsonType(s.const)]);
  if (s.enum) return new Set(s.enum.map(jsonType));
  if (s.type === undefined) return new Set(JSON_TYPES);
  const types = (Array.isArray(s.type) ? s.type : [s.type]).map((t) => (t === 'integer' ? 'number' : t));
  return new Set(types as JsonType[]);
}

/** A value of each JSON type the property does not accept. */
export function wrongTypes(model: SpecModel, property: Schema): { jsonType: JsonType; value: unknown }[] {
  const accepted = acceptedTypes(model, property);
  return JSON_TYPES.filter((t) => !accepted.has(t)).map((t) => ({ jsonType: t, value: SAMPLES[t] }));
}

export interface Violation {
  /** pattern, empty (minLength), const, enum. */
  kind: 'pattern' | 'empty' | 'const' | 'enum';
  value: unknown;
}

const PATTERN_CANDIDATES = ['Not Valid!', 'UPPER_CASE', 'a b', 'é', '1'];

/** Values of the right type that the property's own schema refuses: its pattern, minLength, const or enum. */
export function violations(model: SpecModel, property: Schema): Violation[] {
  const s = deref(model, property);
  const out: Violation[] = [];
  if (s.pattern !== undefined) {
    const re = new RegExp(s.pattern, 'u');
    const value = PATTERN_CANDIDATES.find((v) => !re.test(v));
    if (value !== undefined) out.push({ kind: 'pattern', value });
  }
  if ((s.minLength ?? 0) >= 1) out.push({ kind: 'empty', value: '' });
  if (s.const !== undefined && jsonType(s.const) !== 'string') {
    const c = s.const;
    out.push({ kind: 'const', value: typeof c === 'boolean' ? !c : typeof c === 'number' ? c + 1 : null });
  }
  if (s.enum && s.enum.every((v) => typeof v === 'string')) out.push({ kind: 'enum', value: 'NOT_IN_ENUM' });
  return out;
}

/** String properties with no constraint of their own (free text such as a token or a reply's content). */
export function freeTextFields(model: SpecModel, message: ClientMessage): string[] {
  return Object.entries(message.schema.properties ?? {})
    .filter(([, p]) => {
      if (p.$ref) return false;
      const s = deref(model, p);
      return s.type === 'string' && s.pattern === undefined && s.const === undefined && s.enum === undefined;
    })
    .map(([field]) => field);
}
