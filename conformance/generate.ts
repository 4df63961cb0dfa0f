// Values too large to write into a scenario file: `{ $jsonOfBytes: N }` is an object whose compact JSON is exactly N
// UTF-8 bytes; `{ $stringOfBytes: N, char: 'é' }` is a string of exactly N UTF-8 bytes made of `char` (padded with
// `x` when N is not a multiple of its size); `{ $sum: [a, b, …] }` adds numbers (settings plus or minus a margin),
// `{ $minus: [a, b, …] }` is a - b - …, `{ $length: "text" }` counts a string's UTF-16 code units (an id's length).

function stringOfBytes(bytes: number, char = 'x'): string {
  const size = Buffer.byteLength(char, 'utf8');
  const count = Math.floor(bytes / size);
  return char.repeat(count) + 'x'.repeat(bytes - count * size);
}

export function expand(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(expand);
  if (!value || typeof value !== 'object') return value;
  const v = value as Record<string, unknown>;
  if (Array.isArray(v.$sum))
    return (v.$sum as unknown[]).map(expand).reduce((total: number, n) => total + Number(n), 0);
  if (Array.isArray(v.$minus)) return (v.$minus as unknown[]).map((n) => Number(expand(n))).reduce((a, b) => a - b);
  if ('$length' in v) return String(expand(v.$length)).length;
  if ('$stringOfBytes' in v)
    return stringOfBytes(Number(expand(v.$stringOfBytes)), typeof v.char === 'string' ? v.char : undefined);
  if ('$jsonOfBytes' in v) {
    const overhead = Buffer.byteLength('{"d":""}', 'utf8');
    return {
      d: stringOfBytes(Number(expand(v.$jsonOfBytes)) - overhead, typeof v.char === 'string' ? v.char : undefined),
    };
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expand(x)]));
}
