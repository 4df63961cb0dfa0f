// The robustness campaign's case generator (conformance/robustness/cases.ts): seeded and reproducible, derived from
// the spec, and each case judged by a requirement that exists with the source it claims. The schema checks here
// read generated/schemas.json and spec/asyncapi.yaml on their own, and validate every generated frame with the
// generated validators: a bad frame must fail its direction's open schema, an accepted boundary value must pass it.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import {
  CATEGORIES,
  fillPlaceholders,
  generateCases,
  limitMappings,
  type InputCase,
} from '../../conformance/robustness/cases.js';
import { loadRequirements } from '../../conformance/scenario.js';
import { LIMITS, validateOpenAgentToServiceMessage, validateOpenAppToServiceMessage } from '../../generated/index.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
interface Node {
  $ref?: string;
  type?: string;
  const?: unknown;
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, Node>;
  oneOf?: Node[];
  description?: string;
}
const definitions = (
  JSON.parse(readFileSync(resolve(ROOT, 'generated/schemas.json'), 'utf8')) as { definitions: Record<string, Node> }
).definitions;
const xLimits = (parse(readFileSync(resolve(ROOT, 'spec/asyncapi.yaml'), 'utf8')) as Record<string, unknown>)[
  'x-limits'
] as Record<string, { value: number; unit: string; applies_to: string }>;

const resolveRef = (node: Node): Node => (node.$ref ? resolveRef(definitions[node.$ref.split('/').pop()!]!) : node);
const IDS = { event_id: '01JQ7ZK3M4N5P6Q7R8S9T0V1W2', agent_id: 'tutor-7k2m', app_id: 'classroom-app' };
const VALIDATE = { app: validateOpenAppToServiceMessage, agent: validateOpenAgentToServiceMessage };

/** The messages of a direction as the schemas give them: type → schema, extension messages left out. */
function schemaMessages(union: string): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const member of definitions[union]!.oneOf!) {
    const schema = resolveRef(member);
    if (/extension/i.test(schema.description ?? '')) continue;
    out.set(schema.properties!.type!.const as string, schema);
  }
  return out;
}

/** The judged (last) frame, placeholders filled, parsed; undefined when it is binary or not JSON. */
function judged(c: InputCase): unknown {
  const last = c.frames.at(-1)!;
  if (!('text' in last)) return undefined;
  try {
    return JSON.parse(fillPlaceholders(last.text, IDS)) as unknown;
  } catch {
    return undefined;
  }
}

describe('robustness case generator', function () {
  const all = generateCases({ seed: 1 });
  const byId = new Map(all.map((c) => [c.id, c]));

  it('gives the same cases for the same seed, and another sample for another seed', function () {
    expect(generateCases({ seed: 1 })).to.deep.equal(all);
    expect(generateCases({ seed: 99 }).map((c) => c.id)).to.deep.equal(all.map((c) => c.id));
    const a = generateCases({ seed: 7, cases: 40 });
    expect(generateCases({ seed: 7, cases: 40 })).to.deep.equal(a);
    expect(a).to.have.length(40);
    expect(generateCases({ seed: 8, cases: 40 }).map((c) => c.id)).to.not.deep.equal(a.map((c) => c.id));
    // In the full list's order.
    const order = a.map((c) => all.findIndex((x) => x.id === c.id));
    expect(order).to.deep.equal([...order].sort((x, y) => x - y));
  });

  it('keeps at least one case of every category and message type in a sample, however small', function () {
    const messages = new Set(all.filter((c) => c.message).map((c) => `${c.endpoint}.${c.message}`));
    for (const seed of [1, 2, 3]) {
      const sample = generateCases({ seed, cases: 1 });
      expect(new Set(sample.map((c) => c.category))).to.deep.equal(new Set(CATEGORIES));
      expect(new Set(sample.filter((c) => c.message).map((c) => `${c.endpoint}.${c.message}`))).to.deep.equal(messages);
    }
  });

  it('names every case uniquely and readably', function () {
    expect(byId.size).to.equal(all.length);
    for (const c of all) expect(c.id).to.match(/^(app|agent)\.[a-z0-9_.+-]+$/);
  });

  for (const [endpoint, union] of [
    ['app', 'OpenAppToServiceMessage'],
    ['agent', 'OpenAgentToServiceMessage'],
  ] as const)
    it(`has a missing-field case for each required field and wrong types for each field of every ${endpoint} message`, function () {
      const messages = schemaMessages(union);
      expect([...messages.keys()]).to.not.include('resume');
      expect(messages.size).to.be.greaterThan(2);
      for (const [type, schema] of messages) {
        for (const field of schema.required ?? [])
          expect(byId.has(`${endpoint}.${type}.${field}.missing`), `${type}.${field}`).to.equal(true);
        for (const [field, property] of Object.entries(schema.properties ?? {})) {
          const p = resolveRef(property);
          const accepted =
            p.const !== undefined
              ? typeof p.const
              : p.enum
                ? typeof p.enum[0]
                : p.type === 'integer'
                  ? 'number'
                  : p.type;
          for (const jsonType of ['number', 'string', 'boolean', 'null', 'array', 'object']) {
            const refused = accepted !== undefined && jsonType !== accepted;
            const id = `${endpoint}.${type}.${field}.wrong-type.${jsonType}`;
            if (refused) expect(byId.has(id), id).to.equal(true);
            else expect(byId.has(id), id).to.equal(false);
          }
        }
      }
    });

  it('says truly whether each judged frame is a message of its endpoint by the open schema', function () {
    for (const c of all) {
      const frame = judged(c);
      const valid = frame !== undefined && VALIDATE[c.endpoint](frame);
      expect(valid, `${c.id}: conforms`).to.equal(c.conforms);
      if (c.expect.kind === 'accepted') expect(valid, `${c.id} is accepted`).to.equal(true);
      if (
        ['not-json', 'not-object', 'unknown-type', 'missing-field', 'wrong-type', 'violation', 'binary'].includes(
          c.category,
        )
      )
        expect(valid, `${c.id} is bad`).to.equal(false);
    }
  });

  it('yields the limit and one over it for every x-limit that bounds a client input, measured in its unit', function () {
    const mapped = limitMappings();
    for (const name of [
      'payloadMaxBytes',
      'tokenFragmentMaxBytes',
      'idMaxChars',
      'threadIdMaxChars',
      'sessionKeyMaxChars',
      'frameMaxBytes',
    ])
      expect(
        mapped.find((l) => l.name === name && l.generated),
        name,
      ).to.not.equal(undefined);
    for (const l of mapped) {
      expect(xLimits[l.name]?.value, l.name).to.equal(l.value);
      if (l.target && !l.generated) expect(l.note, l.name).to.be.a('string');
    }
    const sized = (id: string, measure: (frame: Record<string, unknown>, text: string) => number, limit: number) => {
      for (const [suffix, n] of [
        ['limit', limit],
        ['limit+1', limit + 1],
      ] as const) {
        const c = byId.get(`${id}.${suffix}`);
        expect(c, `${id}.${suffix}`).to.not.equal(undefined);
        const text = fillPlaceholders((c!.frames.at(-1) as { text: string }).text, IDS);
        expect(measure(JSON.parse(text) as Record<string, unknown>, text), `${id}.${suffix}`).to.equal(n);
      }
    };
    const utf8 = (s: unknown) => Buffer.byteLength(String(s));
    for (const v of ['', '.multibyte', '.escaped'])
      sized(`app.event.payload.bytes${v}`, (f) => utf8(JSON.stringify(f.payload)), LIMITS.payloadMaxBytes);
    for (const v of ['', '.multibyte', '.escaped'])
      sized(`agent.token.token.bytes${v}`, (f) => utf8(f.token), LIMITS.tokenFragmentMaxBytes);
    sized('app.event.agent_id.chars', (f) => [...String(f.agent_id)].length, LIMITS.idMaxChars);
    for (const v of ['', '.astral'])
      sized(`app.event.thread_id.chars${v}`, (f) => [...String(f.thread_id)].length, LIMITS.threadIdMaxChars);
    sized(
      'app.event.thread_id.session-key',
      (f) => [...`svc:${IDS.agent_id}:${IDS.app_id}:${String(f.thread_id)}`].length,
      LIMITS.sessionKeyMaxChars,
    );
    for (const endpoint of ['app', 'agent'])
      sized(`${endpoint}.frame.bytes`, (_, text) => utf8(text), LIMITS.frameMaxBytes);
  });

  it('judges each case by a requirement of requirements.yaml with the source it states', function () {
    const requirements = loadRequirements();
    for (const c of all) {
      const r = requirements.get(c.expect.requirement);
      expect(r, `${c.id}: ${c.expect.requirement}`).to.not.equal(undefined);
      expect(r!.source, `${c.id}: ${c.expect.requirement}`).to.equal(c.source);
      if (c.ours) {
        expect(requirements.get(c.ours.requirement)?.source, `${c.id} ours: ${c.ours.requirement}`).to.equal(
          'decision',
        );
        expect(c.source, c.id).to.equal('protocol');
      }
      expect(c.why, c.id).to.match(/^\S.{5,}$/);
    }
  });

  it('follows the protocol where it names a code, and asks for less where it does not', function () {
    const code = (id: string) => {
      const e = byId.get(id)!.expect;
      return e.kind === 'error' ? e.code : e.kind;
    };
    expect(code('app.not-json.plain-text')).to.equal('INVALID_JSON');
    expect(code('agent.not-json.plain-text')).to.equal('INVALID_JSON');
    expect(code('app.event.agent_id.pattern')).to.equal('INVALID_AGENT_ID');
    expect(code('app.event.thread_id.empty')).to.equal('INVALID_THREAD_ID');
    expect(code('app.event.thread_id.wrong-type.number')).to.equal('INVALID_THREAD_ID');
    expect(code('app.event.payload.bytes.limit+1')).to.equal('PAYLOAD_TOO_LARGE');
    expect(code('app.event.payload.bytes.limit')).to.equal('accepted');
    expect(code('agent.token.token.bytes.limit+1')).to.equal('MESSAGE_TOO_LARGE');
    expect(code('agent.reply.after-reply')).to.equal('INVALID_EVENT_ID');
    expect(code('agent.token.after-reply')).to.equal('INVALID_EVENT_ID');
    expect(code('app.not-object.array')).to.equal('any-error');
    expect(code('app.binary.json')).to.equal('error-or-silence');
    expect(code('agent.binary.garbage')).to.equal('error-or-silence');
    // INVALID_MESSAGE is ours (W4): never the protocol profile's expectation.
    for (const c of all)
      if (c.expect.kind === 'error' && c.expect.code === 'INVALID_MESSAGE') expect(c.source, c.id).to.equal('decision');
    // The judged frame of an interleaving is the last: the first ends the event.
    expect(byId.get('agent.reply.after-reply')!.frames).to.have.length(2);
  });

  it('needs an event exactly when a frame names ${event_id}, and only on the agent endpoint', function () {
    for (const c of all) {
      const names = c.frames.some((f) => 'text' in f && f.text.includes('${event_id}'));
      expect(c.needsEvent, c.id).to.equal(names);
      if (c.needsEvent) expect(c.endpoint, c.id).to.equal('agent');
      for (const f of c.frames)
        if ('binary' in f) expect(Buffer.from(f.binary, 'base64').toString('base64')).to.equal(f.binary);
    }
  });
});
