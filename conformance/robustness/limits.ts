// Boundary sizes around every x-limit that bounds a client's input: which field each limit applies to is read from
// its `applies_to` and name (spec/asyncapi.yaml), its unit from `unit`; the value sits exactly at the limit and one
// unit over it. What the bridge must do at each boundary is the protocol's (#payload-limit, #fragment-limit,
// #session-key-limit, #frame-limit) or, where the protocol is silent, our decisions' (L1, L2, W2).
import { anyErr, decision, err, KEEPS_CONNECTION, NO_MESSAGE, protocol, quiet, type Draft } from './types.js';
import { type ClientMessage, type Endpoint } from './mutations.js';
import type { SpecModel } from './spec-model.js';

export interface LimitMapping {
  name: string;
  value: number;
  unit: string;
  applies_to: string;
  /** What the limit bounds in a client's input, or undefined when it bounds none (with why in `note`). */
  target?:
    { kind: 'field'; endpoint: Endpoint; message: string; field: string } | { kind: 'frame' } | { kind: 'session-key' };
  /** Whether boundary cases are generated for it, and if not why. */
  generated: boolean;
  note?: string;
}

type LimitBase = Pick<LimitMapping, 'name' | 'value' | 'unit' | 'applies_to'>;
function fieldLimit(base: LimitBase, m: ClientMessage, field: string): LimitMapping {
  const target = { kind: 'field' as const, endpoint: m.endpoint, message: m.type, field };
  return RULES[`${m.endpoint}.${m.type}.${field}`]
    ? { ...base, target, generated: true }
    : { ...base, target, generated: false, note: 'no requirement of requirements.yaml judges it' };
}

const snake = (camel: string) => camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Every x-limit with what it bounds in a client's input (bytes and characters only: sizes a frame can carry). */
export function describeLimits(model: SpecModel, messages: ClientMessage[]): LimitMapping[] {
  const out: LimitMapping[] = [];
  for (const [name, spec] of Object.entries(model.limits)) {
    const base = { name, value: spec.value, unit: spec.unit, applies_to: spec.applies_to };
    if (spec.unit !== 'bytes' && spec.unit !== 'characters') continue;
    const stem = name.replace(/Max(Bytes|Chars)$/, '');
    const named = /\b(app|agent) `(\w+)`/.exec(spec.applies_to);
    if (named) {
      const m = messages.find((x) => x.endpoint === named[1] && x.type === named[2]);
      const props = Object.keys(m?.schema.properties ?? {});
      const field = [snake(stem), ...snake(stem).split('_')].find((f) => props.includes(f));
      if (m && field) {
        out.push(fieldLimit(base, m, field));
        continue;
      }
    }
    if (/WebSocket frame/.test(spec.applies_to)) {
      out.push({ ...base, target: { kind: 'frame' }, generated: true });
      continue;
    }
    if (/^session keys?$/.test(spec.applies_to)) {
      out.push({ ...base, target: { kind: 'session-key' }, generated: true, note: 'through the thread_id' });
      continue;
    }
    const listed = spec.applies_to.split(/,\s*/).filter((w) => /^[a-z]+_[a-z_]+$/.test(w));
    if (listed.length > 0) {
      for (const field of listed) {
        const m = messages.find((x) => x.schema.properties?.[field] && field !== 'type');
        out.push(
          m
            ? fieldLimit(base, m, field)
            : { ...base, generated: false, note: `${field} is no field of a client-to-service message` },
        );
      }
      continue;
    }
    out.push({ ...base, generated: false, note: 'bounds no field or frame a client sends' });
  }
  return out;
}

/** A value of `n` units: ascii, two-byte (é), written as JSON escapes, or astral code points (😀, two UTF-16 units). */
type Variant = 'ascii' | 'multibyte' | 'escaped' | 'astral';

/** The JSON text of a string whose content measures n in `unit` (bytes of UTF-8, or code points). */
function stringOf(n: number, unit: 'bytes' | 'characters', variant: Variant, letter = 'x'): string {
  if (variant === 'escaped') return `"${`\\u${letter.charCodeAt(0).toString(16).padStart(4, '0')}`.repeat(n)}"`;
  if (variant === 'astral') return JSON.stringify('😀'.repeat(n));
  if (variant === 'multibyte' && unit === 'bytes')
    return JSON.stringify('é'.repeat(Math.floor(n / 2)) + letter.repeat(n % 2));
  if (variant === 'multibyte') return JSON.stringify('é'.repeat(n));
  return JSON.stringify(letter.repeat(n));
}

const VALUE = '"__VALUE__"';
const withValue = (message: ClientMessage, field: string, wrap: (v: string) => unknown = () => '__VALUE__') =>
  JSON.stringify({ ...message.base, [field]: wrap('__VALUE__') });

/** Boundary cases (the limit, and one unit over it) for every limit that bounds what an `endpoint` client sends. */
export function limitCases(model: SpecModel, messages: ClientMessage[], endpoint: Endpoint): Draft[] {
  const out: Draft[] = [];
  const all = messages;
  for (const limit of describeLimits(model, all)) {
    if (!limit.generated) continue;
    const t = limit.target;
    if (!t) continue;
    const n = limit.value;
    const at = (over: boolean) => (over ? 'limit+1' : 'limit');
    if (t.kind === 'frame') {
      // A JSON string of exactly n (n+1) bytes: no message, so nothing else refuses it first.
      for (const over of [false, true])
        out.push({
          endpoint,
          conforms: false,
          category: 'limit',
          id: `${endpoint}.frame.bytes.${at(over)}`,
          frames: [{ text: `"${'x'.repeat(n + (over ? 1 : 0) - 2)}"` }],
          why: `a frame of ${n + (over ? 1 : 0)} bytes (frameMaxBytes ${n}${over ? ' + 1' : ''}) that is no message`,
          ...(over
            ? { mayClose: true, ...protocol(quiet(KEEPS_CONNECTION[endpoint])) }
            : protocol(anyErr(NO_MESSAGE[endpoint]), endpoint === 'app' ? err('INVALID_JSON', 'ERR-009') : undefined)),
        });
      continue;
    }
    const event = all.find((m) => m.endpoint === 'app' && m.type === 'event');
    if (t.kind === 'session-key') {
      if (endpoint !== 'app' || !event) continue;
      for (const over of [false, true])
        out.push({
          endpoint,
          message: 'event',
          conforms: true,
          category: 'limit',
          id: `app.event.thread_id.session-key.${at(over)}`,
          frames: [
            { text: withValue(event, 'thread_id').replace(VALUE, `"\${thread_id_for_key:${n + (over ? 1 : 0)}}"`) },
          ],
          why: `a thread_id that makes the stored session key ${n + (over ? 1 : 0)} characters (sessionKeyMaxChars ${n}${over ? ' + 1' : ''})`,
          ...(over
            ? protocol(err('INVALID_THREAD_ID', 'SESS-003'))
            : { mayAccept: true, ...protocol(quiet('ERR-010')) }),
        });
      continue;
    }
    if (t.endpoint !== endpoint) continue;
    const m = all.find((x) => x.endpoint === t.endpoint && x.type === t.message);
    if (!m) continue;
    const key = `${t.endpoint}.${t.message}.${t.field}`;
    const rule = RULES[key];
    if (!rule) continue;
    const unit = limit.unit === 'bytes' ? 'bytes' : 'characters';
    const unitWord = unit === 'bytes' ? 'bytes' : 'chars';
    for (const variant of rule.variants)
      for (const over of [false, true]) {
        const size = n + (over ? 1 : 0) - rule.overhead;
        const body = withValue(m, t.field, rule.wrap).replace(VALUE, stringOf(size, unit, variant, rule.letter));
        out.push({
          endpoint,
          message: m.type,
          conforms: true,
          category: 'limit',
          id: `${key}.${unitWord}${variant === 'ascii' ? '' : `.${variant}`}.${at(over)}`,
          frames: [{ text: body }],
          why: `${m.type}.${t.field} of ${n + (over ? 1 : 0)} ${limit.unit}${variant === 'ascii' ? '' : ` (${variant})`}: ${limit.name} ${n}${over ? ' + 1' : ''}`,
          ...(over ? rule.over : rule.at),
        });
      }
  }
  return out;
}

interface Rule {
  /** Units of the measured value that are not the string (the payload's `{"d":""}`). */
  overhead: number;
  wrap?: (v: string) => unknown;
  letter?: string;
  variants: Variant[];
  at: Omit<Draft, 'id' | 'endpoint' | 'frames' | 'why' | 'category' | 'conforms'>;
  over: Omit<Draft, 'id' | 'endpoint' | 'frames' | 'why' | 'category' | 'conforms'>;
}

/** What the protocol (or, where it is silent, our decision) says at each field limit. */
const RULES: Record<string, Rule> = {
  // #payload-limit: compact JSON of the payload, as re-serialised (escapes in the frame do not count as written).
  'app.event.payload': {
    overhead: '{"d":""}'.length,
    wrap: (v) => ({ d: v }),
    variants: ['ascii', 'multibyte', 'escaped'],
    at: protocol({ kind: 'accepted', requirement: 'ERR-004' }),
    over: protocol(err('PAYLOAD_TOO_LARGE', 'ERR-004')),
  },
  // #fragment-limit: UTF-8 bytes of the token string (after JSON decoding). "4 KB" reads as 4000 or 4096 bytes, so
  // at 4096 the protocol lets a bridge forward the fragment or refuse it, keeping the connection (AGT-009);
  // forwarding exactly 4096 bytes is ours (W11, AGT-005), as in agt-fragment-size. 4097 is over on either reading.
  'agent.token.token': {
    overhead: 0,
    variants: ['ascii', 'multibyte', 'escaped'],
    at: { mayAccept: true, ...protocol(quiet('AGT-009'), { kind: 'accepted', requirement: 'AGT-005' }) },
    over: protocol(err('MESSAGE_TOO_LARGE', 'AGT-003')),
  },
  // The protocol bounds no id; a well-formed agent_id no agent has is AGENT_NOT_FOUND. Ours: 1-64 (L1).
  'app.event.agent_id': {
    overhead: 0,
    letter: 'a',
    variants: ['ascii'],
    at: protocol(err('AGENT_NOT_FOUND', 'ERR-005')),
    over: protocol(anyErr('ERR-005'), err('INVALID_AGENT_ID', 'ERR-012')),
  },
  // The protocol bounds only the session key (#session-key-limit); 121 code points is ours (L2).
  'app.event.thread_id': {
    overhead: 0,
    letter: 't',
    variants: ['ascii', 'astral'],
    at: decision({ kind: 'accepted', requirement: 'ERR-012' }),
    over: decision(err('INVALID_THREAD_ID', 'ERR-012')),
  },
};
