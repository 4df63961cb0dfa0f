// The robustness campaign's case generator (issue 31): hostile input for both endpoints of any bridge, derived from
// the spec (the generated schemas' client-to-service messages and x-limits), each case with what the protocol says
// the bridge must do with it and the requirement that judges it. Pure and seeded: no I/O beyond reading the spec
// once (spec-model.ts), no sockets; the same seed gives the same cases in the same order.
import { ENDPOINT_PATHS } from '../../generated/index.js';
import { describeLimits, limitCases, type LimitMapping } from './limits.js';
import {
  clientMessages,
  freeTextFields,
  violations,
  wrongTypes,
  type ClientMessage,
  type Endpoint,
} from './mutations.js';
import { mulberry32, shuffled } from './random.js';
import { loadSpecModel, type SpecModel } from './spec-model.js';
import {
  anyErr,
  decision,
  err,
  KEEPS_CONNECTION,
  NO_MESSAGE,
  protocol,
  quiet,
  type Draft,
  type GenerateOptions,
  type InputCase,
  type Judgement,
} from './types.js';

export type { Endpoint } from './mutations.js';
export * from './types.js';
export type { LimitMapping } from './limits.js';

/**
 * What the protocol says of a bad field (spec/protocol.md #app-errors, #agent-errors, #never-silent, #agent-fields):
 * `kind` is missing, wrong-type or a violation's kind.
 */
function judgeField(m: ClientMessage, field: string, kind: string): Judgement {
  if (m.endpoint === 'app') {
    const invalidMessage = err('INVALID_MESSAGE', 'ERR-009');
    if (m.type === 'event' && field === 'thread_id' && kind !== 'pattern')
      return protocol(err('INVALID_THREAD_ID', 'ERR-003')); // empty, missing or not a string (§7.1)
    if (m.type === 'event' && field === 'agent_id') {
      if (kind === 'pattern') return protocol(err('INVALID_AGENT_ID', 'ERR-002'));
      if (kind === 'empty') return decision(err('INVALID_AGENT_ID', 'ERR-012')); // L1: 1-64 characters
      return protocol(anyErr('ERR-011'), err('INVALID_AGENT_ID', 'ERR-009'));
    }
    return protocol(anyErr('ERR-011'), invalidMessage);
  }
  // Agent: the tables give each field's type, and event_id is required (§2.3); which other fields are is open.
  if (kind === 'missing' && field !== 'type' && field !== 'event_id')
    return m.type === 'reply' || m.type === 'error'
      ? decision(anyErr('AGT-010')) // W20
      : decision(err('INVALID_MESSAGE', 'ERR-009')); // W4
  if (kind === 'pattern' || kind === 'empty' || kind === 'enum') return decision(err('INVALID_MESSAGE', 'ERR-009'));
  return protocol(anyErr('AGT-008'));
}

const text = (value: unknown) => ({ text: JSON.stringify(value) });
const without = (o: Record<string, unknown>, field: string) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => k !== field));
const usesEvent = (frames: InputCase['frames']) => frames.some((f) => 'text' in f && f.text.includes('${event_id}'));

const finish = (d: Draft): InputCase => ({ ...d, needsEvent: d.needsEvent ?? usesEvent(d.frames) });

function schemaCases(model: SpecModel, m: ClientMessage): Draft[] {
  const out: Draft[] = [];
  const at = `${m.endpoint}.${m.type}`;
  const props = m.schema.properties ?? {};
  const base = { endpoint: m.endpoint, message: m.type, conforms: false };
  for (const field of m.schema.required ?? []) {
    out.push({
      ...base,
      id: `${at}.${field}.missing`,
      category: 'missing-field',
      frames: [text(without(m.base, field))],
      why: `${m.type} without its required ${field}`,
      ...judgeField(m, field, 'missing'),
    });
  }
  for (const [field, property] of Object.entries(props)) {
    for (const { jsonType, value } of wrongTypes(model, property))
      out.push({
        ...base,
        id: `${at}.${field}.wrong-type.${jsonType}`,
        category: 'wrong-type',
        frames: [text({ ...m.base, [field]: value })],
        why: `${m.type}.${field} is ${jsonType === 'null' ? 'null' : `a ${jsonType}`}, a type its schema refuses`,
        ...judgeField(m, field, 'wrong-type'),
      });
    if (field === 'type') continue; // unknown types are their own category
    for (const v of violations(model, property))
      out.push({
        ...base,
        id: `${at}.${field}.${v.kind}`,
        category: 'violation',
        frames: [text({ ...m.base, [field]: v.value })],
        why: `${m.type}.${field} is ${JSON.stringify(v.value)}, which its schema's ${v.kind === 'empty' ? 'minLength' : v.kind} refuses`,
        ...judgeField(m, field, v.kind),
      });
  }
  // W5: our messages are closed; the protocol is silent on extra fields, so only the bridge profile judges them.
  if (m.schema.additionalProperties !== false && model.definitions[m.closed]?.additionalProperties === false)
    out.push({
      ...base,
      conforms: true,
      id: `${at}.extra-field`,
      category: 'extra-field',
      frames: [text({ ...m.base, unexpected_field: 1 })],
      why: `${m.type} with a field its schema does not name`,
      ...decision(err('INVALID_MESSAGE', 'ERR-009')),
    });
  if (props.event_id && m.endpoint === 'agent') {
    const idBase = { ...base, conforms: true, category: 'interleaving' as const };
    out.push(
      {
        ...idBase,
        id: `${at}.event_id.unknown`,
        frames: [text({ ...m.base, event_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' })],
        why: `${m.type} for an event the bridge never gave this agent`,
        ...protocol(err('INVALID_EVENT_ID', 'AGT-001')),
      },
      {
        ...idBase,
        id: `${at}.event_id.malformed`,
        frames: [text({ ...m.base, event_id: 'not an id!' })],
        why: `${m.type} whose event_id is no id at all`,
        ...protocol(err('INVALID_EVENT_ID', 'AGT-001')),
      },
    );
  }
  return out;
}

function frameCases(endpoint: Endpoint, messages: ClientMessage[]): Draft[] {
  const noMessage = NO_MESSAGE[endpoint];
  const keeps = KEEPS_CONNECTION[endpoint];
  const invalidJson = endpoint === 'app' ? 'ERR-001' : 'AGT-004';
  const oursNotObject = endpoint === 'app' ? err('INVALID_JSON', 'ERR-009') : undefined;
  const oursNoMessage = endpoint === 'app' ? err('INVALID_MESSAGE', 'ERR-009') : undefined;
  const first = messages[0];
  const sample = JSON.stringify(first?.base ?? { type: 'ping' });
  const out: Draft[] = [];
  const base = { endpoint, conforms: false };
  const notJson: [string, string, string][] = [
    ['plain-text', 'not json', 'plain text'],
    ['truncated', sample.slice(0, Math.max(1, sample.length - 3)), 'a message cut off before its end'],
    ['trailing-comma', sample.replace(/}$/, ',}'), 'a trailing comma'],
    ['single-quotes', sample.replaceAll('"', "'"), 'single quotes instead of double'],
    ['empty', '', 'an empty text frame'],
    ['trailing-garbage', `${sample}x`, 'a message followed by garbage'],
    ['nan', 'NaN', 'NaN, which JSON does not have'],
    ['two-objects', `${sample}${sample}`, 'two messages in one frame'],
  ];
  for (const [variant, t, what] of notJson)
    out.push({
      ...base,
      id: `${endpoint}.not-json.${variant}`,
      category: 'not-json',
      frames: [{ text: t }],
      why: `not JSON: ${what}`,
      ...protocol(err('INVALID_JSON', invalidJson)),
    });
  for (const [variant, t] of [
    ['array', `[${sample}]`],
    ['string', '"ping"'],
    ['number', '42'],
    ['boolean', 'true'],
    ['null', 'null'],
  ] as const)
    out.push({
      ...base,
      id: `${endpoint}.not-object.${variant}`,
      category: 'not-object',
      frames: [{ text: t }],
      why: `valid JSON but no object: ${variant === 'array' ? 'a message inside an array' : `a ${variant}`}`,
      ...protocol(anyErr(noMessage), oursNotObject),
    });
  const known = new Set(messages.map((m) => m.type));
  const unknown: [string, unknown][] = [
    ['no-type', without(first?.base ?? {}, 'type')],
    ['empty', { ...first?.base, type: '' }],
    ['uppercase', { ...first?.base, type: (first?.type ?? 'ping').toUpperCase() }],
    ['misspelt', { ...first?.base, type: `${first?.type ?? 'ping'}s` }],
    ['other-endpoint', { type: endpoint === 'app' ? 'token' : 'discover' }],
  ];
  for (const [variant, value] of unknown) {
    const type = (value as { type?: unknown }).type;
    if (typeof type === 'string' && known.has(type)) continue;
    out.push({
      ...base,
      id: `${endpoint}.unknown-type.${variant}`,
      category: 'unknown-type',
      frames: [text(value)],
      why: `a type this endpoint does not receive: ${type === undefined ? 'none' : JSON.stringify(type)}`,
      ...protocol(anyErr(noMessage), oursNoMessage),
    });
  }
  const ping = Buffer.from(JSON.stringify({ type: 'ping' })).toString('base64');
  out.push(
    {
      ...base,
      id: `${endpoint}.binary.json`,
      category: 'binary',
      frames: [{ binary: ping }],
      why: 'a ping sent as a binary frame (messages are text frames)',
      ...protocol(quiet(keeps)),
    },
    {
      ...base,
      id: `${endpoint}.binary.garbage`,
      category: 'binary',
      frames: [{ binary: Buffer.from('fffe0080c07b', 'hex').toString('base64') }],
      why: 'a binary frame of bytes that are not UTF-8',
      ...protocol(quiet(keeps)),
    },
  );
  return out;
}

const UNICODE: [string, string, string][] = [
  ['lone-surrogate', '\\ud800', 'a lone surrogate (\\ud800)'],
  ['lone-low-surrogate', 'x\\udc00', 'a lone low surrogate (\\udc00)'],
  ['nul', 'a\\u0000b', 'U+0000'],
  ['c1-control', 'a\\u0085b', 'a C1 control character (U+0085)'],
  ['bom', '\\ufeffx', 'a byte order mark'],
];

/** Unicode edge cases, written as JSON escapes: in free text (the protocol is silent), and in thread_id (L2). */
function unicodeCases(model: SpecModel, messages: ClientMessage[]): Draft[] {
  const out: Draft[] = [];
  const placeholder = '"__VALUE__"';
  for (const m of messages) {
    const targets: [string, Record<string, unknown>][] = freeTextFields(model, m).map((f) => [
      f,
      { ...m.base, [f]: '__VALUE__' },
    ]);
    if (m.schema.properties?.payload) targets.push(['payload', { ...m.base, payload: { text: '__VALUE__' } }]);
    for (const [field, value] of targets)
      for (const [variant, escaped, what] of UNICODE)
        out.push({
          endpoint: m.endpoint,
          message: m.type,
          conforms: true,
          id: `${m.endpoint}.${m.type}.${field}.unicode.${variant}`,
          category: 'unicode',
          frames: [{ text: JSON.stringify(value).replace(placeholder, `"${escaped}"`) }],
          why: `${m.type}.${field} holds ${what}, which the protocol neither allows nor forbids`,
          mayAccept: true,
          ...protocol(quiet(KEEPS_CONNECTION[m.endpoint])),
        });
    const thread = m.schema.properties?.thread_id;
    if (thread)
      for (const [variant, escaped, what] of UNICODE.filter(([v]) => v !== 'bom'))
        out.push({
          endpoint: m.endpoint,
          message: m.type,
          conforms: true,
          id: `${m.endpoint}.${m.type}.thread_id.unicode.${variant}`,
          category: 'unicode',
          frames: [
            { text: JSON.stringify({ ...m.base, thread_id: '__VALUE__' }).replace(placeholder, `"${escaped}"`) },
          ],
          why: `thread_id holds ${what}: not well-formed by our L2 (the protocol does not say what well-formed is)`,
          ...decision(err('INVALID_THREAD_ID', 'ERR-012')),
        });
  }
  return out;
}

/** A token for an ended event, a reply twice, a reply before any token (the last frame is the judged one). */
function interleavingCases(messages: ClientMessage[]): Draft[] {
  const byType = new Map(messages.filter((m) => m.endpoint === 'agent').map((m) => [m.type, m.base]));
  const token = byType.get('token');
  const reply = byType.get('reply');
  const error = byType.get('error');
  if (!token || !reply || !error) return [];
  const base = { endpoint: 'agent' as const, conforms: true, category: 'interleaving' as const, needsEvent: true };
  const ended = (first: string, firstBase: unknown, then: string, thenBase: unknown): Draft => ({
    ...base,
    message: then,
    id: `agent.${then}.after-${first}`,
    frames: [text(firstBase), text(thenBase)],
    why: `a ${then} for an event the agent already ended with its ${first}`,
    ...protocol(err('INVALID_EVENT_ID', 'AGT-002')),
  });
  return [
    ended('reply', reply, 'token', token),
    ended('reply', reply, 'reply', reply),
    ended('reply', reply, 'error', error),
    ended('error', error, 'reply', reply),
    ended('error', error, 'token', token),
    {
      ...base,
      message: 'reply',
      id: 'agent.reply.before-any-token',
      frames: [text(reply)],
      why: 'a reply before any token: a whole answer, forwarded to the app',
      ...protocol({ kind: 'accepted', requirement: 'FLOW-004' }),
    },
  ];
}

/** Every case, in a fixed order (schemas, frames, limits, unicode, interleavings; app first). */
function allCases(model: SpecModel): InputCase[] {
  const drafts: Draft[] = [];
  const both = [...clientMessages(model, 'app'), ...clientMessages(model, 'agent')];
  // app first: ENDPOINT_PATHS lists the client kinds in the spec's order.
  for (const endpoint of Object.keys(ENDPOINT_PATHS) as Endpoint[]) {
    const messages = both.filter((m) => m.endpoint === endpoint);
    drafts.push(...frameCases(endpoint, messages));
    for (const m of messages) drafts.push(...schemaCases(model, m));
    drafts.push(...limitCases(model, both, endpoint));
    drafts.push(...unicodeCases(model, messages));
    if (endpoint === 'agent') drafts.push(...interleavingCases(messages));
  }
  const cases = drafts.map(finish);
  const seen = new Set<string>();
  for (const c of cases) {
    if (seen.has(c.id)) throw new Error(`robustness: two cases named ${c.id}`);
    seen.add(c.id);
  }
  return cases;
}

/**
 * The campaign's cases: all of them without `cases`, else a sample of that many drawn from the seed that keeps at
 * least one case of every message type (per endpoint) and of every category (so the sample may be larger than
 * asked when `cases` is smaller than those), in the full list's order.
 */
export function generateCases(options: GenerateOptions): InputCase[] {
  const all = allCases(options.spec ?? loadSpecModel());
  if (options.cases === undefined || options.cases >= all.length) return all;
  const random = mulberry32(options.seed);
  const order = shuffled(
    all.map((_, i) => i),
    random,
  );
  const chosen = new Set<number>();
  const covered = new Set<string>();
  const keys = (c: InputCase) => [
    `category:${c.category}`,
    ...(c.message ? [`message:${c.endpoint}.${c.message}`] : []),
  ];
  for (const i of order) {
    const fresh = keys(all[i] as InputCase).filter((k) => !covered.has(k));
    if (fresh.length === 0) continue;
    chosen.add(i);
    for (const k of fresh) covered.add(k);
  }
  for (const i of order) {
    if (chosen.size >= options.cases) break;
    chosen.add(i);
  }
  return all.filter((_, i) => chosen.has(i));
}

/** Fills a frame's placeholders with the run's ids (${thread_id_for_key:N}: a thread_id that makes the key N long). */
export function fillPlaceholders(frameText: string, ids: { event_id: string; agent_id: string; app_id: string }) {
  return frameText.replace(/\$\{(event_id|agent_id|app_id|thread_id_for_key:(\d+))\}/g, (_, name: string, n) => {
    if (n === undefined) return ids[name as 'event_id' | 'agent_id' | 'app_id'];
    const fixed = [...`svc:${ids.agent_id}:${ids.app_id}:`].length;
    const length = Number(n) - fixed;
    if (length < 1) throw new Error(`no thread_id makes a session key of ${n} characters with these ids`);
    return 't'.repeat(length);
  });
}

/** Every x-limit measured in bytes or characters, with what it bounds in a client's input and whether cases test it. */
export function limitMappings(spec: SpecModel = loadSpecModel()): LimitMapping[] {
  return describeLimits(spec, [...clientMessages(spec, 'app'), ...clientMessages(spec, 'agent')]);
}
