// What a schema node is to Python: its type, the expression that checks and converts a JSON value into it, and
// the one that turns it back into JSON. Named object schemas become classes, named enums Literal aliases, and
// named strings and numbers (AgentId, StreamSeq) are inlined with their bounds.
import type { Definitions, Schema } from '../schemas.js';
import { py, upperSnake } from './text.js';

export type Kind =
  | { k: 'const'; value: unknown }
  | { k: 'string'; args: string[] }
  | { k: 'integer'; args: string[] }
  | { k: 'number'; args: string[] }
  | { k: 'boolean' }
  | { k: 'enum'; alias: string; options: string }
  | { k: 'dict' }
  | { k: 'class'; name: string }
  | { k: 'list'; item: Kind; args: string[] }
  | { k: 'map'; item: Kind };

/** Module-level names a module needs besides its classes: compiled patterns, enum tuples. */
export interface Needs {
  patterns: Map<string, string>;
  enums: Set<string>;
}

const refName = (ref: string): string => ref.replace('#/definitions/', '');

/** A named enum's constant of all its values: `ErrorCode` -> `ERROR_CODES`, `ConnectorStatus` -> `CONNECTOR_STATUSES`. */
export function enumTuple(name: string): string {
  const upper = upperSnake(name);
  return upper.endsWith('S') ? `${upper}ES` : `${upper}S`;
}

/** JSON Schema's `pattern` is searched (ECMA-262); Python's `$` would also match before a final newline. */
function pythonPattern(pattern: string): string {
  return /(^|[^\\])\$$/.test(pattern) ? `${pattern.slice(0, -1)}\\Z` : pattern;
}

function boundArgs(schema: Schema, names: Record<string, string>): string[] {
  return Object.entries(names)
    .filter(([keyword]) => schema[keyword] !== undefined)
    .map(([keyword, arg]) => `${arg}=${py(schema[keyword])}`);
}

export function isClassSchema(schema: Schema | undefined): boolean {
  return !!schema && schema.type === 'object' && !!schema.properties && !schema.oneOf;
}

/** The Kind of `schema`, met at `where` (for errors); `owner` names inline patterns. */
export function kindOf(schema: Schema, defs: Definitions, needs: Needs, where: string): Kind {
  if (schema.$ref) {
    const name = refName(String(schema.$ref));
    const target = defs.all.get(name);
    if (!target) throw new Error(`${where}: $ref to unknown schema ${name}`);
    if (isClassSchema(target)) return { k: 'class', name };
    if (target.enum) {
      needs.enums.add(name);
      return { k: 'enum', alias: name, options: enumTuple(name) };
    }
    return kindOf(target, defs, needs, name);
  }
  if (schema.const !== undefined) return { k: 'const', value: schema.const };
  if (schema.enum) throw new Error(`${where}: an inline enum; give it a named schema (a Literal alias in Python)`);
  switch (schema.type) {
    case 'string': {
      const args = boundArgs(schema, { minLength: 'min_length', maxLength: 'max_length' });
      if (schema.pattern !== undefined) {
        const name = `_${upperSnake(where.replace(/\./g, '_'))}_PATTERN`;
        needs.patterns.set(name, pythonPattern(String(schema.pattern)));
        args.push(`pattern=${name}`);
      }
      return { k: 'string', args };
    }
    case 'integer':
    case 'number':
      return {
        k: schema.type,
        args: boundArgs(schema, { minimum: 'minimum', maximum: 'maximum', exclusiveMinimum: 'above' }),
      };
    case 'boolean':
      return { k: 'boolean' };
    case 'array':
      if (!schema.items) throw new Error(`${where}: an array needs items`);
      return {
        k: 'list',
        item: kindOf(schema.items, defs, needs, `${where}.item`),
        args: boundArgs(schema, { minItems: 'min_items' }),
      };
    case 'object':
      if (schema.properties) throw new Error(`${where}: an inline object with properties; give it a named schema`);
      if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
        return { k: 'map', item: kindOf(schema.additionalProperties, defs, needs, `${where}.value`) };
      return { k: 'dict' };
    default:
      throw new Error(`${where}: no Python type for a schema of type ${String(schema.type)}`);
  }
}

export function pyType(kind: Kind): string {
  switch (kind.k) {
    case 'const':
      return `Literal[${py(kind.value)}]`;
    case 'string':
      return 'str';
    case 'integer':
      return 'int';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
    case 'enum':
      return kind.alias;
    case 'dict':
      return 'dict[str, Any]';
    case 'class':
      return kind.name;
    case 'list':
      return `list[${pyType(kind.item)}]`;
    case 'map':
      return `dict[str, ${pyType(kind.item)}]`;
  }
}

const withArgs = (fn: string, args: string[]): string =>
  args.length ? `lambda v, p: ${fn}(v, p, ${args.join(', ')})` : fn;

/** An expression of type `Callable[[object, str], T]`: checks a JSON value at a path and returns it as `T`. */
export function parser(kind: Kind): string {
  switch (kind.k) {
    case 'const':
      throw new Error('a constant is checked with _const, not parsed');
    case 'string':
      return withArgs('_string', kind.args);
    case 'integer':
      return withArgs('_integer', kind.args);
    case 'number':
      return withArgs('_number', kind.args);
    case 'boolean':
      return '_boolean';
    case 'enum':
      return `lambda v, p: _enum(v, p, ${kind.options})`;
    case 'dict':
      return '_dict';
    case 'class':
      return `${kind.name}._from_json`;
    case 'list':
      return `lambda v, p: _list_of(v, p, ${parser(kind.item)}${kind.args.map((a) => `, ${a}`).join('')})`;
    case 'map':
      return `lambda v, p: _dict_of(v, p, ${parser(kind.item)})`;
  }
}

/** The JSON form of `value` (a Python expression of the kind's type); `depth` keeps comprehension names apart. */
export function serialiser(kind: Kind, value: string, depth = 0): string {
  const item = `item${depth || ''}`;
  switch (kind.k) {
    case 'class':
      return `${value}.to_json()`;
    case 'dict':
      return `dict(${value})`;
    case 'list':
      return `[${serialiser(kind.item, item, depth + 1)} for ${item} in ${value}]`;
    case 'map':
      return `{key${depth || ''}: ${serialiser(kind.item, item, depth + 1)} for key${depth || ''}, ${item} in ${value}.items()}`;
    default:
      return value;
  }
}
