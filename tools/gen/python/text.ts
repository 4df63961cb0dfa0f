// How JSON names, values and prose are written in Python source.

/** `baseDelayMs` -> `base_delay_ms`; snake_case names stay as they are. */
export function snake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** `tokenFragmentMaxBytes` -> `TOKEN_FRAGMENT_MAX_BYTES`, `ClientKind` -> `CLIENT_KIND`. */
export function upperSnake(name: string): string {
  return snake(name).toUpperCase();
}

/** A JSON value as a Python literal. */
export function py(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${value} has no JSON form`);
    return String(value);
  }
  if (typeof value === 'string') return JSON.stringify(value); // JSON's escapes are Python's too
  if (Array.isArray(value)) return `[${value.map(py).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${JSON.stringify(k)}: ${py(v)}`)
    .join(', ')}}`;
}

/** A tuple literal (a one-element tuple keeps its comma). */
export function pyTuple(values: unknown[]): string {
  return values.length === 1 ? `(${py(values[0])},)` : `(${values.map(py).join(', ')})`;
}

/** A docstring of `text` at `indent`, its lines as the spec wrote them. */
export function docstring(text: string | undefined, indent: string): string[] {
  if (!text?.trim()) return [];
  const body = text.trim().replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"');
  const lines = body.split('\n');
  const last = lines.length - 1;
  if (lines[last]!.endsWith('"')) lines[last] += ' ';
  if (lines.length === 1) return [`${indent}"""${lines[0]}"""`];
  return [`${indent}"""${lines[0]}`, ...lines.slice(1).map((l) => (l ? `${indent}${l}` : '')), `${indent}"""`];
}

/** A `#` comment of `text` on one line. */
export function comment(text: string, indent = ''): string {
  return `${indent}# ${text.replace(/\s+/g, ' ').trim()}`;
}
