// Patterns for frames and bodies: `${name}` placeholders capture a value the first time and must be equal after;
// objects match partially (keys not named are not checked: the schema validators check the rest); arrays match
// element by element; `{ $absent: true }` says a key must not be there; `{ $range: [min, max] }` bounds a number.

export type Bindings = Map<string, unknown>;

const WHOLE = /^\$\{([A-Za-z0-9_.-]+)\}$/;
const PART = /\$\{([A-Za-z0-9_.-]+)\}/g;

export class UnboundError extends Error {}

/** Replaces every `${name}` in strings with its bound value; a whole-string placeholder keeps the value's type. */
export function interpolate(value: unknown, bindings: Bindings): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) {
      if (!bindings.has(whole[1]!)) throw new UnboundError(`\${${whole[1]}} is not bound yet`);
      return bindings.get(whole[1]!);
    }
    return value.replace(PART, (_, name: string) => {
      if (!bindings.has(name)) throw new UnboundError(`\${${name}} is not bound yet`);
      return String(bindings.get(name));
    });
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, bindings));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, bindings)]));
  }
  return value;
}

/** Why `actual` does not match `pattern`, or undefined when it does; new captures go into `captured`. */
export function mismatch(pattern: unknown, actual: unknown, bindings: Bindings, captured: Bindings, path = ''): string | undefined {
  const where = path || 'value';
  if (typeof pattern === 'string') {
    const whole = WHOLE.exec(pattern);
    if (whole && !bindings.has(whole[1]!) && !captured.has(whole[1]!)) {
      captured.set(whole[1]!, actual);
      return undefined;
    }
    const expected = interpolate(pattern, new Map([...bindings, ...captured]));
    return Object.is(expected, actual) ? undefined : `${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) return `${where}: expected an array, got ${JSON.stringify(actual)}`;
    if (actual.length !== pattern.length) return `${where}: expected ${pattern.length} items, got ${actual.length}`;
    for (let i = 0; i < pattern.length; i++) {
      const m = mismatch(pattern[i], actual[i], bindings, captured, `${where}[${i}]`);
      if (m) return m;
    }
    return undefined;
  }
  if (pattern && typeof pattern === 'object') {
    const p = pattern as Record<string, unknown>;
    if ('$range' in p) {
      const [min, max] = p.$range as [number, number];
      return typeof actual === 'number' && actual >= min && actual <= max ? undefined : `${where}: expected a number in [${min}, ${max}], got ${JSON.stringify(actual)}`;
    }
    if ('$any' in p) return actual === undefined ? `${where}: expected a value, got none` : undefined;
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return `${where}: expected an object, got ${JSON.stringify(actual)}`;
    const a = actual as Record<string, unknown>;
    for (const [key, sub] of Object.entries(p)) {
      const child = path ? `${path}.${key}` : key;
      if (sub && typeof sub === 'object' && '$absent' in (sub as object)) {
        if (Object.hasOwn(a, key)) return `${child}: expected no such field, got ${JSON.stringify(a[key])}`;
        continue;
      }
      if (!Object.hasOwn(a, key)) return `${child}: missing`;
      const m = mismatch(sub, a[key], bindings, captured, child);
      if (m) return m;
    }
    return undefined;
  }
  return Object.is(pattern, actual) ? undefined : `${where}: expected ${JSON.stringify(pattern)}, got ${JSON.stringify(actual)}`;
}
