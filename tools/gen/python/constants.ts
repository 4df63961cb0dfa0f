// errors.py (the error catalogue: codes, who gets them, retry, close codes, texts) and limits.py (x-limits and the
// endpoints' paths), from the same checked extensions as generated/catalogue.ts.
import type { Definitions, Schema } from '../schemas.js';
import { checkCatalogue, checkLimits, endpointPaths } from '../catalogue.js';
import { comment, docstring, py, pyTuple, upperSnake } from './text.js';

const RECEIVERS = ['app', 'agent', 'http'];
const SCOPES = ['event', 'frame', 'connection', 'http'];
const ORIGINS = ['protocol', 'decision', 'extension'];
const literal = (values: string[]): string => `Literal[${values.map(py).join(', ')}]`;

export function errorsModule(tree: Schema, defs: Definitions): string {
  const catalogue = checkCatalogue(tree, defs);
  const codes = Object.keys(catalogue);
  const extraCloses = (tree['x-close-codes'] ?? {}) as Record<string, { code: number; cause: string }>;
  const out = [
    '"""The error catalogue of spec/asyncapi.yaml (x-error-catalogue): every code, who receives it, how it is reported,',
    'whether retrying can help, and the texts this implementation writes."""',
    '',
    'from __future__ import annotations',
    '',
    'from collections.abc import Mapping',
    'from dataclasses import dataclass',
    'from typing import Final, Literal, TypeAlias',
    '',
    `ErrorCode: TypeAlias = ${literal(codes)}`,
    ...docstring(defs.all.get('ErrorCode')?.description, ''),
    '',
    `ERROR_CODES: Final[tuple[ErrorCode, ...]] = ${pyTuple(codes)}`,
    '"""Every error code, in catalogue order."""',
    '',
    `ErrorOrigin: TypeAlias = ${literal(ORIGINS)}`,
    `"""protocol: a code the protocol names; decision: this implementation's, where it names none; extension: an opt-in extension's."""`,
    `ErrorReceiver: TypeAlias = ${literal(RECEIVERS)}`,
    '"""Who receives an error: an app or agent connection, or an HTTP client."""',
    `ErrorScope: TypeAlias = ${literal(SCOPES)}`,
    '"""event: ends one event; frame: refuses one frame; connection: error, then close; http: an HTTP error body."""',
    '',
    '',
    '@dataclass(frozen=True)',
    'class ErrorSpec:',
    '    """One entry of the catalogue."""',
    '',
    '    origin: ErrorOrigin',
    '    receivers: tuple[ErrorReceiver, ...]',
    '    scope: ErrorScope',
    '    retry: bool',
    '    """Whether the same request (or, for a connection error, a reconnect) can succeed later unchanged."""',
    '    cause: str',
    '    close_code: int | None',
    '    """The WebSocket close code that follows the error (connection errors only)."""',
    '    http_status: int | None',
    '    """The HTTP status of the error body (errors HTTP clients receive only)."""',
    '',
    '',
    'ERRORS: Final[Mapping[ErrorCode, ErrorSpec]] = {',
  ];
  for (const [code, e] of Object.entries(catalogue)) {
    const args = [
      `origin=${py(e.origin)}`,
      `receivers=${pyTuple(e.receivers)}`,
      `scope=${py(e.scope)}`,
      `retry=${py(e.retry)}`,
      `cause=${py(e.cause)}`,
      `close_code=${py(e.close_code ?? null)}`,
      `http_status=${py(e.http_status ?? null)}`,
    ];
    out.push(`    ${py(code)}: ErrorSpec(${args.join(', ')}),`);
  }
  out.push('}', '"""The error catalogue: every code, who receives it, how it is reported."""', '');
  out.push('ERROR_MESSAGES: Final[Mapping[ErrorCode, Mapping[str, str]]] = {');
  for (const [code, e] of Object.entries(catalogue)) if (e.messages) out.push(`    ${py(code)}: ${py(e.messages)},`);
  out.push('}');
  out.push(
    '"""The texts this implementation writes for a code, by situation; `{name}` is a placeholder (str.format_map fills it)."""',
    '',
  );
  out.push('CLOSE_CODES: Final[Mapping[int, ErrorCode]] = {');
  for (const [code, e] of Object.entries(catalogue)) if (e.close_code) out.push(`    ${e.close_code}: ${py(code)},`);
  out.push('}', '"""The code of each connection error\'s WebSocket close code (4401 -> UNAUTHORIZED, ...)."""', '');
  out.push('OTHER_CLOSE_CODES: Final[Mapping[int, str]] = {');
  for (const [name, c] of Object.entries(extraCloses))
    out.push(comment(c.cause, '    '), `    ${c.code}: ${py(name)},`);
  out.push('}', '"""The closes that are not connection errors (no `error` message before them), by close code."""', '');
  return out.join('\n');
}

export function limitsModule(tree: Schema, defs: Definitions): string {
  const limits = checkLimits(tree, defs);
  const typeOf = (v: number) => (Number.isInteger(v) ? 'int' : 'float');
  const valueType = Object.values(limits).every((l) => Number.isInteger(l.value)) ? 'int' : 'float';
  const out = [
    '"""The protocol\'s limits and defaults (x-limits of spec/asyncapi.yaml) and the WebSocket endpoints\' paths."""',
    '',
    'from __future__ import annotations',
    '',
    'from collections.abc import Mapping',
    'from typing import Final',
    '',
    'from .messages import ClientKind',
    '',
  ];
  for (const [name, l] of Object.entries(limits)) {
    out.push(`${upperSnake(name)}: Final[${typeOf(l.value)}] = ${py(l.value)}`);
    out.push(...docstring(`${l.description} (${l.unit}; ${l.applies_to})`, ''), '');
  }
  out.push(`LIMITS: Final[Mapping[str, ${valueType}]] = {`);
  for (const name of Object.keys(limits)) out.push(`    ${py(name)}: ${upperSnake(name)},`);
  out.push('}', '"""Every limit, by its name in the spec."""', '');
  out.push(`ENDPOINT_PATHS: Final[Mapping[ClientKind, str]] = ${py(endpointPaths(tree, defs))}`);
  out.push('"""The path each kind of client connects to (the servers\' pathname, then the channel\'s address)."""', '');
  return out.join('\n');
}
