// A JSON call to a bridge's HTTP API: 2xx bodies checked against the named generated schema, error bodies
// against HttpError, so an answer that breaks spec/openapi.yaml fails the test.
import { validators } from '../../generated/index.js';

export interface HttpOptions {
  body?: unknown;
  token?: string | null;
  schema?: keyof typeof validators;
}

export async function httpJson(
  baseUrl: string,
  method: string,
  path: string,
  { body, token, schema }: HttpOptions = {},
): Promise<{ status: number; body: any }> {
  const response = await fetch(new URL(path, baseUrl), {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  }).catch((err: Error & { cause?: { code?: string; message?: string } }) => {
    // fetch says only "fetch failed"; why (refused, reset, closed by the other side) is in its cause.
    throw new Error(
      `${method} ${path}: ${err.message} (${err.cause?.code ?? err.cause?.message ?? 'no cause given'})`,
      { cause: err },
    );
  });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : undefined;
  const check = response.ok ? (schema ? validators[schema] : undefined) : validators.HttpError;
  if (check && !check(parsed))
    throw new Error(`${method} ${path} answered an invalid body ${text}: ${JSON.stringify(check.errors)}`);
  return { status: response.status, body: parsed };
}
