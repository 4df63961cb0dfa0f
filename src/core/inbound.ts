// Incoming frames: text -> a validated message of the endpoint's direction, or the spec'd error for it.
import {
  describeErrors,
  errorField,
  FIELD_ERROR_CODES,
  type ErrorCode,
  type Validator,
} from '../../generated/index.js';

export type Direction = keyof typeof FIELD_ERROR_CODES;

export type Inbound<T> =
  | { ok: true; message: T }
  | { ok: false; code: ErrorCode; error: string; type?: string; fields: Record<string, unknown> };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Own keys only: a frame may name its fields `__proto__` or `constructor`. */
function fieldErrorCode(direction: Direction, type: string | undefined, field: string): ErrorCode {
  const byType = FIELD_ERROR_CODES[direction] as Record<string, Record<string, ErrorCode>>;
  const byField = type !== undefined && Object.hasOwn(byType, type) ? byType[type]! : {};
  return Object.hasOwn(byField, field) ? byField[field]! : 'INVALID_MESSAGE';
}

export function parseInbound<T>(data: string, isBinary: boolean, validate: Validator<T>, direction: Direction): Inbound<T> {
  if (isBinary) return { ok: false, code: 'INVALID_JSON', error: 'Binary frames are not accepted; send JSON text.', fields: {} };
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (err) {
    return { ok: false, code: 'INVALID_JSON', error: `Message is not valid JSON: ${(err as Error).message}`, fields: {} };
  }
  if (!isObject(value)) return { ok: false, code: 'INVALID_JSON', error: 'Message must be a JSON object.', fields: {} };
  if (validate(value)) return { ok: true, message: value };
  const first = validate.errors?.[0];
  const type = typeof value.type === 'string' ? value.type : undefined;
  const field = first ? errorField(first).split('.')[0]! : '';
  return {
    ok: false,
    code: fieldErrorCode(direction, type, field),
    error: `Invalid ${type !== undefined && type.length <= 32 ? type : 'message'}: ${describeErrors(validate.errors)}.`,
    type,
    fields: value,
  };
}
