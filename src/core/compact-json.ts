// JSON.stringify without spaces, for values that came from JSON.parse. V8's JSON.stringify recurses and throws
// on very deep nesting (about 5000 levels) that JSON.parse accepted; a payload is opaque and must not be refused
// or crash the bridge for that, so deep values fall back to an iterative serialiser with the same output.

type Frame =
  | { kind: 'array'; items: unknown[]; next: number }
  | { kind: 'object'; obj: Record<string, unknown>; keys: string[]; next: number };

export function compactJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return iterativeJson(value);
  }
}

function scalar(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  return undefined;
}

export function iterativeJson(root: unknown): string {
  const out: string[] = [];
  const stack: Frame[] = [];
  const open = (value: unknown): void => {
    const s = scalar(value);
    if (s !== undefined) return void out.push(s);
    if (Array.isArray(value)) {
      out.push('[');
      stack.push({ kind: 'array', items: value, next: 0 });
    } else {
      out.push('{');
      const obj = value as Record<string, unknown>;
      stack.push({ kind: 'object', obj, keys: Object.keys(obj), next: 0 });
    }
  };
  open(root);
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    if (top.kind === 'array') {
      if (top.next === top.items.length) {
        out.push(']');
        stack.pop();
        continue;
      }
      if (top.next > 0) out.push(',');
      open(top.items[top.next++]);
    } else {
      if (top.next === top.keys.length) {
        out.push('}');
        stack.pop();
        continue;
      }
      const key = top.keys[top.next++]!;
      out.push(`${top.next > 1 ? ',' : ''}${JSON.stringify(key)}:`);
      open(top.obj[key]);
    }
  }
  return out.join('');
}
