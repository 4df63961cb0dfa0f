// Incoming frames: text -> a validated message of the endpoint's direction, or the spec'd error for it.
import {
  describeErrors,
  errorField,
  FIELD_ERROR_CODES,
  type ErrorCode,
  type Validator,
} from '../../generated/index.js';
import { errorText } from '../shared/error-text.js';

export type Direction = keyof typeof FIELD_ERROR_CODES;

type ValuesOf<T> = T[keyof T];
/** The codes a schema failure can get: one named for the failing field, else INVALID_MESSAGE. */
type SchemaFailureCode =
  | ValuesOf<{
      [D in Direction]: ValuesOf<{
        [T in keyof (typeof FIELD_ERROR_CODES)[D]]: ValuesOf<(typeof FIELD_ERROR_CODES)[D][T]>;
      }>;
    }>
  | 'INVALID_MESSAGE';

export type Inbound<T> =
  | { ok: true; message: T }
  | { ok: false; code: ErrorCode; error: string; type?: string; fields: Record<string, unknown> };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own keys only: a frame may name its fields `__proto__` or `constructor`. */
function fieldErrorCode(direction: Direction, type: string | undefined, field: string): SchemaFailureCode {
  const byType = FIELD_ERROR_CODES[direction] as Record<string, Record<string, SchemaFailureCode>>;
  const byField = type !== undefined && Object.hasOwn(byType, type) ? byType[type]! : {};
  return Object.hasOwn(byField, field) ? byField[field]! : 'INVALID_MESSAGE';
}

export function parseInbound<T>(
  data: string,
  isBinary: boolean,
  validate: Validator<T>,
  direction: Direction,
): Inbound<T> {
  if (isBinary) return { ok: false, code: 'INVALID_JSON', error: errorText('INVALID_JSON', 'binary'), fields: {} };
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (err) {
    return {
      ok: false,
      code: 'INVALID_JSON',
      error: errorText('INVALID_JSON', 'not_json', { detail: (err as Error).message }),
      fields: {},
    };
  }
  if (!isObject(value))
    return { ok: false, code: 'INVALID_JSON', error: errorText('INVALID_JSON', 'not_object'), fields: {} };
  if (validate(value)) return { ok: true, message: value };
  const first = validate.errors?.[0];
  const type = typeof value.type === 'string' ? value.type : undefined;
  const field = first ? errorField(first).split('.')[0]! : '';
  const code = fieldErrorCode(direction, type, field);
  return {
    ok: false,
    code,
    error: errorText(code, 'invalid', {
      type: type !== undefined && type.length <= 32 ? type : 'message',
      detail: describeErrors(validate.errors),
    }),
    type,
    fields: value,
  };
}
