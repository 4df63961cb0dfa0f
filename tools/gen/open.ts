// The open variant of each AsyncAPI schema: what the protocol itself requires of a message, for judging a bridge
// that follows the protocol but not this implementation's decisions (the conformance suite's protocol profile).
// Two rules, both read from the spec so nothing is restated: objects are open (closing them is decision W5), and a
// schema's `x-open` names the keywords the protocol words differently — `null` drops one (an id length of ours),
// a value replaces it (`tokens_used` is a number in the protocol, an integer here).
import type { Schema } from './load.js';

const OPEN_PREFIX = 'Open';

export const openName = (name: string): string => `${OPEN_PREFIX}${name}`;

function loosen(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(loosen);
  if (!node || typeof node !== 'object') return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'additionalProperties' && value === false) continue;
    out[key] = loosen(value);
  }
  const overrides = (node as Schema)['x-open'];
  if (overrides && typeof overrides === 'object') {
    for (const [key, value] of Object.entries(overrides)) {
      if (value === null) delete out[key];
      else out[key] = value;
    }
  }
  return out;
}

/** `#/definitions/X` -> `#/definitions/OpenX`, so an open schema only ever refers to open ones. */
function toOpenRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toOpenRefs);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === '$ref' ? String(value).replace('#/definitions/', `#/definitions/${OPEN_PREFIX}`) : toOpenRefs(value),
    ]),
  );
}

/**
 * `raw`: the AsyncAPI document's component schemas as written (with their `x-open`); `unions`: the derived
 * per-direction unions, already normalised. `normalise` is the generator's own (refs, extensions).
 */
export function openVariants(
  raw: Record<string, Schema>,
  unions: Map<string, Schema>,
  normalise: (node: unknown) => Schema,
): Map<string, Schema> {
  const open = new Map<string, Schema>();
  for (const [name, schema] of Object.entries(raw)) {
    open.set(openName(name), { ...(toOpenRefs(normalise(loosen(schema))) as Schema), title: openName(name) });
  }
  for (const [name, schema] of unions)
    open.set(openName(name), { ...(toOpenRefs(schema) as Schema), title: openName(name) });
  return new Map([...open].sort(([a], [b]) => a.localeCompare(b)));
}
