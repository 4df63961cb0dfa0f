// Values too large to write into a scenario file: `{ $jsonOfBytes: N }` is an object whose compact JSON is exactly N
// UTF-8 bytes; `{ $stringOfBytes: N, char: 'é' }` is a string of exactly N UTF-8 bytes made of `char` (padded with
// `x` when N is not a multiple of its size).

function stringOfBytes(bytes: number, char = 'x'): string {
  const size = Buffer.byteLength(char, 'utf8');
  const count = Math.floor(bytes / size);
  return char.repeat(count) + 'x'.repeat(bytes - count * size);
}

export function expand(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(expand);
  if (!value || typeof value !== 'object') return value;
  const v = value as Record<string, unknown>;
  if (typeof v.$stringOfBytes === 'number') return stringOfBytes(v.$stringOfBytes, typeof v.char === 'string' ? v.char : undefined);
  if (typeof v.$jsonOfBytes === 'number') {
    const overhead = Buffer.byteLength('{"d":""}', 'utf8');
    return { d: stringOfBytes(v.$jsonOfBytes - overhead, typeof v.char === 'string' ? v.char : undefined) };
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expand(x)]));
}
