// messages.py: a frozen dataclass per message of the app and agent endpoints and per named object they use
// (and the connector's configuration and health), the per-direction unions, and parsers dispatching on `type`.
import { readFileSync } from 'node:fs';
import type { Definitions, Schema } from '../schemas.js';
import { enumTuple, isClassSchema, kindOf, parser, pyType, serialiser, type Kind, type Needs } from './fields.js';
import { docstring, py, pyTuple, snake } from './text.js';

/** The checks every from_json is made of: a real module (mypy reads it alone), copied from its marker on. */
const HELPERS = readFileSync(new URL('./helpers.py', import.meta.url), 'utf8').split(
  '# ---- copied into messages.py from here ----\n',
)[1]!;

/** The connector's configuration: a misspelt option fails loudly (its schema says so), so its classes reject unknown fields. */
const CLOSED_ROOT = 'ConnectorConfig';

/** Where a named enum lives: the error codes with the catalogue, in errors.py. */
const ENUM_MODULE: Record<string, string> = { ErrorCode: 'errors' };

const KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
);

const attrOf = (key: string): string => (KEYWORDS.has(snake(key)) ? `${snake(key)}_` : snake(key));

interface Field {
  key: string;
  attr: string;
  kind: Kind;
  required: boolean;
  default?: unknown;
  description?: string;
}

function fieldsOf(name: string, schema: Schema, defs: Definitions, needs: Needs): Field[] {
  const required = new Set<string>(schema.required ?? []);
  return Object.entries<Schema>(schema.properties ?? {}).map(([key, p]) => {
    const target = p.$ref ? defs.all.get(String(p.$ref).replace('#/definitions/', '')) : undefined;
    return {
      key,
      attr: attrOf(key),
      kind: kindOf(p, defs, needs, `${name}.${key}`),
      required: required.has(key),
      default: p.default,
      description: p.description ?? (isClassSchema(target) ? undefined : target?.description),
    };
  });
}

function declaration(f: Field): string {
  const type = pyType(f.kind);
  if (f.kind.k === 'const')
    return f.required ? `${f.attr}: ${type} = ${py(f.kind.value)}` : `${f.attr}: ${type} | None = None`;
  if (f.required) return `${f.attr}: ${type}`;
  if (f.default === undefined) return `${f.attr}: ${type} | None = None`;
  if (f.default !== null && typeof f.default === 'object')
    return `${f.attr}: ${type} = _field(default_factory=lambda: ${py(f.default)})`;
  return `${f.attr}: ${type} = ${py(f.default)}`;
}

function argument(f: Field): string | undefined {
  const at = `d, ${JSON.stringify(f.key)}, path`;
  if (f.kind.k === 'const') {
    const check = `_const(d, ${JSON.stringify(f.key)}, ${py(f.kind.value)}, path, required=${f.required ? 'True' : 'False'})`;
    return f.required ? undefined : `${f.attr}=${py(f.kind.value)} if ${check} else None`;
  }
  if (f.required) return `${f.attr}=_required(${at}, ${parser(f.kind)})`;
  if (f.default === undefined) return `${f.attr}=_optional(${at}, ${parser(f.kind)})`;
  return `${f.attr}=_defaulted(${at}, ${parser(f.kind)}, lambda: ${py(f.default)})`;
}

function classCode(name: string, schema: Schema, fields: Field[], closed: boolean): string[] {
  const out = [`@dataclass(frozen=True, kw_only=True)`, `class ${name}:`, ...docstring(schema.description, '    ')];
  for (const f of fields) out.push('', `    ${declaration(f)}`, ...docstring(f.description, '    '));
  out.push('', '    def to_json(self) -> dict[str, Any]:');
  out.push(`        """The JSON object of this ${name}: the schema's fields, absent optionals left out."""`);
  const always = fields.filter((f) => f.required || (f.kind.k !== 'const' && f.default !== undefined));
  out.push(
    `        out: dict[str, Any] = {${always.map((f) => `${JSON.stringify(f.key)}: ${serialiser(f.kind, `self.${f.attr}`)}`).join(', ')}}`,
  );
  for (const f of fields.filter((f) => !always.includes(f))) {
    out.push(`        if self.${f.attr} is not None:`);
    out.push(`            out[${JSON.stringify(f.key)}] = ${serialiser(f.kind, `self.${f.attr}`)}`);
  }
  out.push('        return out', '');
  out.push('    @classmethod');
  out.push(`    def from_json(cls, data: Mapping[str, Any]) -> ${name}:`);
  out.push(
    closed
      ? `        """Checks \`data\` against the schema (unknown fields included) and builds the ${name}; raises MessageError."""`
      : `        """Checks \`data\` against the schema and builds the ${name} (unknown fields are ignored); raises MessageError."""`,
  );
  out.push('        return cls._from_json(data, "")', '');
  out.push('    @classmethod');
  out.push(`    def _from_json(cls, data: object, path: str) -> ${name}:`);
  out.push('        d = _object(data, path)');
  if (closed) out.push(`        _closed(d, ${pyTuple(fields.map((f) => f.key))}, path)`);
  for (const f of fields.filter((f) => f.kind.k === 'const' && f.required))
    out.push(
      `        _const(d, ${JSON.stringify(f.key)}, ${py((f.kind as { value: unknown }).value)}, path, required=True)`,
    );
  const args = fields.map(argument).filter((a): a is string => a !== undefined);
  out.push(
    args.length
      ? `        return cls(\n${args.map((a) => `            ${a},`).join('\n')}\n        )`
      : '        return cls()',
  );
  return out;
}

/** The names reachable from `root` through $refs to class schemas, `root` included. */
function closure(root: string, defs: Definitions): Set<string> {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key !== '$ref') visit(value);
        else {
          const name = String(value).replace('#/definitions/', '');
          if (!found.has(name) && isClassSchema(defs.all.get(name))) {
            found.add(name);
            visit(defs.all.get(name));
          }
        }
      }
    }
  };
  visit({ $ref: `#/definitions/${root}` });
  return found;
}

/** `AppToServiceMessage` -> `parse_app_to_service`. */
export const parserName = (union: string): string => `parse_${snake(union.replace(/Message$/, ''))}`;

export function messagesModule(defs: Definitions): string {
  const unions = new Set(defs.unions.keys());
  const names = [...defs.all.keys()].filter((n) => defs.origin.get(n) === 'asyncapi' && !unions.has(n));
  const classNames = names.filter((n) => isClassSchema(defs.all.get(n)));
  const closed = closure(CLOSED_ROOT, defs);
  if (!closed.size) throw new Error(`asyncapi.yaml: no schema ${CLOSED_ROOT} (the connector's configuration)`);
  const needs: Needs = { patterns: new Map(), enums: new Set() };
  const classes = classNames.map((n) =>
    classCode(n, defs.all.get(n)!, fieldsOf(n, defs.all.get(n)!, defs, needs), closed.has(n)),
  );
  // Every named enum of the document is a Literal alias, used by a message or not (ClientKind, ConnectorStatus).
  for (const n of names) if (defs.all.get(n)!.enum) needs.enums.add(n);

  const out: string[] = [
    '"""The messages of the app and agent endpoints, and the agent connector\'s configuration and health, as typed',
    'classes with JSON checks (the schemas of spec/asyncapi.yaml, read by tools/gen/python)."""',
    '',
    'from __future__ import annotations',
    '',
    'import re',
    'from collections.abc import Callable, Mapping',
    'from dataclasses import dataclass',
    'from dataclasses import field as _field',
    'from typing import Any, Final, Literal, TypeAlias, TypeVar',
    '',
  ];
  const imported = [...needs.enums].filter((n) => ENUM_MODULE[n]).sort();
  for (const n of imported) out.push(`from .${ENUM_MODULE[n]} import ${enumTuple(n)}, ${n}`);
  out.push('', HELPERS.trimEnd(), '', '');
  for (const n of [...needs.enums].filter((n) => !ENUM_MODULE[n]).sort()) {
    const values: string[] = defs.all.get(n)!.enum;
    out.push(`${n}: TypeAlias = Literal[${values.map(py).join(', ')}]`, ...docstring(defs.all.get(n)!.description, ''));
    out.push(`${enumTuple(n)}: Final[tuple[${n}, ...]] = ${pyTuple(values)}`, '');
  }
  for (const [name, pattern] of [...needs.patterns].sort(([a], [b]) => a.localeCompare(b)))
    out.push(`${name}: Final = re.compile(${JSON.stringify(pattern)})`);
  for (const code of classes) out.push('', '', ...code);
  out.push('', '');
  for (const [union, members] of defs.unions) {
    out.push(`${union}: TypeAlias = ${members.join(' | ')}`, ...docstring(defs.all.get(union)?.description, ''), '');
  }
  for (const [union, members] of defs.unions) {
    const table = `_${snake(union).toUpperCase()}`;
    const entries = members.map((m) => `    ${py(defs.all.get(m)!.properties.type.const)}: ${m}.from_json,`);
    out.push('', `${table}: Final[Mapping[str, Callable[[Mapping[str, Any]], ${union}]]] = {`, ...entries, '}', '', '');
    out.push(`def ${parserName(union)}(data: object) -> ${union}:`);
    out.push(
      `    """One frame of this direction (the decoded JSON) as its class, by its \`type\`; raises MessageError (UnknownMessageType for a type it does not know)."""`,
    );
    out.push(`    return _dispatch(data, ${table})`, '');
  }
  return out.join('\n').replace(/\n{3,}(?=\S)/g, '\n\n\n');
}
