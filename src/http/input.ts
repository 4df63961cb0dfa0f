// Request input checked against the generated validators: a JSON body, or an optional query parameter.
import type { Context } from 'koa';
import { describeErrors, type Validator } from '../../generated/index.js';
import { Problem } from '../admin/problem.js';

export function body<T>(ctx: Context, validate: Validator<T>): T {
  const value = (ctx.request as { body?: unknown }).body;
  if (!validate(value)) throw new Problem('INVALID_REQUEST', `Invalid request body: ${describeErrors(validate.errors)}.`);
  return value;
}

/** An optional query parameter: absent, or valid by its schema. */
export function param<T>(value: unknown, name: string, validate: (v: unknown) => v is T): T | undefined {
  if (value === undefined) return undefined;
  if (!validate(value)) throw new Problem('INVALID_REQUEST', `${name}: ${JSON.stringify(value).slice(0, 80)} is not a valid value.`);
  return value;
}

/** The `limit` of a paged admin listing (events, sessions): 1 to 500, 100 when absent (spec/openapi.yaml). */
export function pageLimit(value: unknown): number {
  const limit = value === undefined ? 100 : Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new Problem('INVALID_REQUEST', 'limit: must be a whole number from 1 to 500.');
  return limit;
}
