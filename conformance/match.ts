// Patterns for frames and bodies: `${name}` placeholders capture a value the first time and must be equal after;
// objects match partially (keys not named are not checked: the schema validators check the rest); arrays match
// element by element, `{ $unordered: [...] }` in any order, `{ $includes: [...] }` each somewhere (others allowed),
// `{ $sortedBy: key }` checks only the order; `{ $absent: true }` says a key must not be there;
// `{ $range: [min, max] }` bounds a number; `{ $atMostMsSince: mark }` is a number from 0 to the milliseconds the
// suite measured since the step marked `mark`; `{ $ours: REQ-ID, is: pattern }` is a decision of this
// implementation inside a protocol check: judged only when the run judges REQ-ID, and a mismatch fails only REQ-ID.

export type Bindings = Map<string, unknown>;

/** How a match treats what only some runs judge: `$ours` sub-patterns, and the marks of `$atMostMsSince`. */
export interface MatchOptions {
  /** Whether a `$ours` sub-pattern is judged (its requirement is in the run's profile). Absent: never. */
  judgesOurs?: (requirement: string) => boolean;
  /** Set to the requirement of the `$ours` sub-pattern that did not match. */
  failedOurs?: { requirement?: string };
  /** performance.now() of each mark. */
  marks?: Map<string, number>;
}

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
export function mismatch(
  pattern: unknown,
  actual: unknown,
  bindings: Bindings,
  captured: Bindings,
  path = '',
  options: MatchOptions = {},
): string | undefined {
  const where = path || 'value';
  const inner = (p: unknown, a: unknown, at: string) => mismatch(p, a, bindings, captured, at, options);
  if (typeof pattern === 'string') {
    const whole = WHOLE.exec(pattern);
    if (whole && !bindings.has(whole[1]!) && !captured.has(whole[1]!)) {
      captured.set(whole[1]!, actual);
      return undefined;
    }
    const expected = interpolate(pattern, new Map([...bindings, ...captured]));
    return Object.is(expected, actual)
      ? undefined
      : `${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(actual)) return `${where}: expected an array, got ${JSON.stringify(actual)}`;
    if (actual.length !== pattern.length) return `${where}: expected ${pattern.length} items, got ${actual.length}`;
    for (let i = 0; i < pattern.length; i++) {
      const m = inner(pattern[i], actual[i], `${where}[${i}]`);
      if (m) return m;
    }
    return undefined;
  }
  if (pattern && typeof pattern === 'object') {
    const p = pattern as Record<string, unknown>;
    if ('$ours' in p) {
      if (!options.judgesOurs?.(String(p.$ours))) return undefined;
      const m = inner(p.is, actual, path);
      if (m && options.failedOurs) options.failedOurs.requirement ??= String(p.$ours);
      return m;
    }
    if ('$unordered' in p)
      return unorderedMismatch(p.$unordered as unknown[], actual, where, (q, a) =>
        mismatch(q, a, bindings, new Map(captured), where, options),
      );
    if ('$atMostMsSince' in p) {
      const mark = options.marks?.get(String(p.$atMostMsSince));
      if (mark === undefined) return `${where}: no step marked ${String(p.$atMostMsSince)}`;
      const elapsed = performance.now() - mark;
      return typeof actual === 'number' && actual >= 0 && actual <= elapsed + 1
        ? undefined
        : `${where}: expected a number from 0 to ${Math.ceil(elapsed)} (the milliseconds the suite measured), got ${JSON.stringify(actual)}`;
    }
    if ('$includes' in p) {
      if (!Array.isArray(actual)) return `${where}: expected an array, got ${JSON.stringify(actual)}`;
      for (const q of p.$includes as unknown[]) {
        if (actual.every((item) => mismatch(q, item, bindings, new Map(captured), where, options)))
          return `${where}: no item matches ${JSON.stringify(q)}; got ${JSON.stringify(actual).slice(0, 300)}`;
      }
      return undefined;
    }
    if ('$sortedBy' in p) {
      const key = String(p.$sortedBy);
      if (!Array.isArray(actual)) return `${where}: expected an array, got ${JSON.stringify(actual)}`;
      const keys = actual.map((item) => String((item as Record<string, unknown>)?.[key]));
      const sorted = [...keys].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
      return keys.every((k, i) => k === sorted[i])
        ? undefined
        : `${where}: expected sorted by ${key}, got ${JSON.stringify(keys)}`;
    }
    if ('$range' in p) {
      const [min, max] = p.$range as [number, number];
      return typeof actual === 'number' && actual >= min && actual <= max
        ? undefined
        : `${where}: expected a number in [${min}, ${max}], got ${JSON.stringify(actual)}`;
    }
    if ('$any' in p) return actual === undefined ? `${where}: expected a value, got none` : undefined;
    if (!actual || typeof actual !== 'object' || Array.isArray(actual))
      return `${where}: expected an object, got ${JSON.stringify(actual)}`;
    const a = actual as Record<string, unknown>;
    for (const [key, raw] of Object.entries(p)) {
      const child = path ? `${path}.${key}` : key;
      const ours = isOurs(raw) ? String(raw.$ours) : undefined;
      if (ours && !options.judgesOurs?.(ours)) continue;
      const want = ours ? (raw as Record<string, unknown>).is : raw;
      const m =
        want && typeof want === 'object' && '$absent' in want
          ? Object.hasOwn(a, key)
            ? `${child}: expected no such field, got ${JSON.stringify(a[key])}`
            : undefined
          : !Object.hasOwn(a, key)
            ? `${child}: missing`
            : inner(want, a[key], child);
      if (m) {
        if (ours && options.failedOurs) options.failedOurs.requirement ??= ours;
        return m;
      }
    }
    return undefined;
  }
  return Object.is(pattern, actual)
    ? undefined
    : `${where}: expected ${JSON.stringify(pattern)}, got ${JSON.stringify(actual)}`;
}

const isOurs = (v: unknown): v is { $ours: string; is: unknown } => !!v && typeof v === 'object' && '$ours' in v;

/** Whether the items of `actual` match the patterns in some order (captures inside are not kept). */
function unorderedMismatch(
  patterns: unknown[],
  actual: unknown,
  where: string,
  fits: (p: unknown, a: unknown) => string | undefined,
): string | undefined {
  if (!Array.isArray(actual)) return `${where}: expected an array, got ${JSON.stringify(actual)}`;
  if (actual.length !== patterns.length)
    return `${where}: expected ${patterns.length} items in any order, got ${actual.length}: ${JSON.stringify(actual).slice(0, 300)}`;
  const used = new Set<number>();
  const place = (i: number): boolean => {
    if (i === patterns.length) return true;
    for (let j = 0; j < actual.length; j++) {
      if (used.has(j) || fits(patterns[i], actual[j])) continue;
      used.add(j);
      if (place(i + 1)) return true;
      used.delete(j);
    }
    return false;
  };
  return place(0)
    ? undefined
    : `${where}: the items do not match ${JSON.stringify(patterns)} in any order; got ${JSON.stringify(actual).slice(0, 300)}`;
}
