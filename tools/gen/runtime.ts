// What the generated validators need at run time, copied verbatim into generated/runtime.ts by `npm run gen` so that
// generated/ (the package's `./protocol`) stays self-contained. Edit tools/gen/runtime.ts, never the copy: a real,
// type-checked module rather than code held in a string by the generator.

/**
 * One reason a validator rejected its input: the shape of Ajv's ErrorObject, declared here so that the protocol's
 * types need no package of Ajv's (its runtime helpers are inlined into validators.cjs).
 */
export interface ErrorObject {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, any>;
  message?: string;
}

/** A precompiled validator: a type guard whose `errors` explain the last rejection. */
export interface Validator<T> {
  (data: unknown): data is T;
  errors?: ErrorObject[] | null;
}

/** One line a person can read, naming each offending field, from a validator's errors. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? []).map(describeError).join('; ');
}

/** The dotted path of the field an error is about (`metadata.latency_ms`), or `message` for the whole. */
export function errorField(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  const child =
    error.keyword === 'required'
      ? p.missingProperty
      : error.keyword === 'additionalProperties'
        ? p.additionalProperty
        : error.keyword === 'discriminator'
          ? p.tag
          : undefined;
  const parts = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(String(child));
  return parts.length ? parts.join('.') : 'message';
}

/** A value as the error shows it: JSON, cut short so that a huge input never makes a huge error. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 64 ? `${text.slice(0, 61)}...` : text;
}

function describeError(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  const field = errorField(error);
  switch (error.keyword) {
    case 'required':
      return `${field}: is required`;
    case 'additionalProperties':
      return `${field}: is not a field of this message`;
    case 'const':
      return `${field}: must be ${JSON.stringify(p.allowedValue)}`;
    case 'enum':
      return `${field}: must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'discriminator':
      return p.error === 'mapping'
        ? `${field}: ${shown(p.tagValue)} is not a message type of this endpoint`
        : `${field}: is required and must be a string`;
    case 'pattern':
      return `${field}: has characters that are not allowed (must match ${String(p.pattern)})`;
    default:
      return `${field}: ${error.message ?? error.keyword}`;
  }
}
