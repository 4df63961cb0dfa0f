// Request input checked against the generated validators: a JSON body, or an optional query parameter.
import type { Context } from 'koa';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { describeErrors, QUERY_PARAMETERS, type Validator } from '../../generated/index.js';
import { problem } from '../admin/problem.js';

export function body<T>(ctx: Context, validate: Validator<T>): T {
  const value = (ctx.request as { body?: unknown }).body;
  if (!validate(value)) throw problem('INVALID_REQUEST', 'body', { detail: describeErrors(validate.errors) });
  return value;
}

/** An optional query parameter: absent, or valid by its schema. */
export function param<T>(value: unknown, name: string, validate: (v: unknown) => v is T): T | undefined {
  if (value === undefined) return undefined;
  if (!validate(value))
    throw problem('INVALID_REQUEST', 'parameter', { name, value: JSON.stringify(value).slice(0, 80) });
  return value;
}

/** The bounds of a paged listing's `limit` (every paged listing has the same; spec/openapi.yaml). */
type PageLimitBounds = Extract<(typeof QUERY_PARAMETERS)[keyof typeof QUERY_PARAMETERS], { limit: unknown }>['limit'];

/** The `limit` of a paged admin listing: within its parameter's bounds, its default when absent. */
export function pageLimit(value: unknown, bounds: PageLimitBounds): number {
  const { minimum, maximum } = bounds;
  const limit = value === undefined ? bounds.default : Number(value);
  if (!Number.isInteger(limit) || limit < minimum || limit > maximum)
    throw problem('INVALID_REQUEST', 'page_limit', { minimum, maximum });
  return limit;
}

/** An optional whole-number query parameter within its schema's bounds. */
export function integerParam(
  value: unknown,
  name: string,
  bounds: { minimum: number; maximum: number },
): number | undefined {
  const valid = (v: unknown): v is string =>
    typeof v === 'string' && /^[0-9]+$/.test(v) && Number(v) >= bounds.minimum && Number(v) <= bounds.maximum;
  const text = param(value, name, valid);
  return text === undefined ? undefined : Number(text);
}

/** A string query parameter within its schema's length bounds. */
export function withinLength(bounds: { minLength: number; maxLength: number }): (v: unknown) => v is string {
  return (v): v is string => typeof v === 'string' && v.length >= bounds.minLength && v.length <= bounds.maxLength;
}

/** The spec's `format: date-time` (RFC 3339, with its offset), as the generated validators check it. */
const dateTime = fullFormats['date-time'] as { validate: (v: string) => boolean };

/** An optional ISO 8601 date-time query parameter within its length bound, as epoch milliseconds. */
export function timeParam(value: unknown, name: string, bounds: { maxLength: number }): number | undefined {
  const valid = (v: unknown): v is string =>
    typeof v === 'string' && v.length <= bounds.maxLength && dateTime.validate(v);
  const text = param(value, name, valid);
  return text === undefined ? undefined : Date.parse(text);
}
