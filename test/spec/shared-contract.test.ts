// The encoded spec against the shared specification's own tables (§2.2, §2.3, §7, §8): every message and field,
// every error code with its receiver, every limit. The specification as received is kept verbatim in
// spec/received-protocol.md, so this runs wherever the repository is.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ERRORS, LIMITS, MESSAGE_TYPES, type ErrorCode } from '../../generated/index.js';
import { asyncapi, resolveLocal } from '../helpers/raw-spec.js';

const RECEIVED = resolve(import.meta.dirname, '../../spec/received-protocol.md');
const text = readFileSync(RECEIVED, 'utf8');

function section(n: string): string {
  const start = text.indexOf(`\n## ${n}. `) >= 0 ? text.indexOf(`\n## ${n}. `) : text.indexOf(`\n### ${n} `);
  if (start < 0) return '';
  const rest = text.slice(start + 1);
  const end = rest.slice(3).search(/\n##+ \d/);
  return end < 0 ? rest : rest.slice(0, end + 3);
}

function rows(block: string): string[][] {
  return block
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|\s*-/.test(l))
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    )
    .slice(1);
}

/** Field names of a §2.2/§2.3 "Fields" cell: `agent_id (string), payload (object, ...)`. */
function fieldNames(cell: string): string[] {
  if (cell === 'none') return [];
  const list = /^(\w+): array/.exec(cell);
  if (list) return [list[1]!];
  return [...cell.matchAll(/(?:^|, )([a-z_]+) \(/g)].map((m) => m[1]!);
}

/** Schema of the message with `type` in a direction, from the AsyncAPI operations. */
function schemaFor(union: string, type: string): Record<string, any> | undefined {
  const channel = union.includes('App') ? 'app' : 'agent';
  const action = union.startsWith('Service') ? 'send' : 'receive';
  for (const op of Object.values<any>(asyncapi.operations)) {
    if (op.channel.$ref !== `#/channels/${channel}` || op.action !== action) continue;
    for (const ref of op.messages) {
      const schema = resolveLocal(asyncapi, resolveLocal(asyncapi, resolveLocal(asyncapi, ref)).payload);
      if (schema.properties.type.const === type) return schema;
    }
  }
  return undefined;
}

const DIRECTIONS: [heading: string, union: keyof typeof MESSAGE_TYPES][] = [
  ['**App to service**', 'AppToServiceMessage'],
  ['**Service to app**', 'ServiceToAppMessage'],
  ['**Service to agent**', 'ServiceToAgentMessage'],
  ['**Agent to service**', 'AgentToServiceMessage'],
];

/** Fields the shared tables do not list but other sections require. */
const EXTENSIONS: Record<string, string[]> = {
  'ServiceToAppMessage error': ['metadata'], // §7.1: RATE_LIMIT_EXCEEDED gives retry_after_seconds in metadata
  // The resume extension's fields (R2, R3): sent only to a connection opened with ?resume=1.
  'ServiceToAppMessage accepted': ['resume_token'],
  'ServiceToAppMessage token': ['seq'],
  // W13: present only when the list leaves agents out because they do not fit one frame.
  'ServiceToAppMessage agents': ['incomplete'],
};

describe('the encoded spec covers the shared specification', function () {
  before(function () {});

  for (const [heading, union] of DIRECTIONS) {
    it(`has every ${heading.replace(/\*/g, '')} message with exactly its fields`, function () {
      const at = text.indexOf(heading);
      expect(at, heading).to.be.greaterThan(0);
      const table = rows(text.slice(at).split('\n\n')[1] ?? '');
      expect(table, `${heading} table`).to.not.be.empty;
      const types = table.map(([type]) => type!.replace(/`/g, ''));
      expect([...MESSAGE_TYPES[union]].sort(), union).to.include.members(types);
      for (const [typeCell, fields] of table) {
        const type = typeCell!.replace(/`/g, '');
        const schema = schemaFor(union, type);
        expect(schema, `${union} ${type}`).to.not.equal(undefined);
        const props = Object.keys(schema!.properties)
          .filter((p) => p !== 'type')
          .sort();
        const expected = [...fieldNames(fields!), ...(EXTENSIONS[`${union} ${type}`] ?? [])].sort();
        expect(props, `${union} ${type} fields`).to.deep.equal(expected);
      }
    });
  }

  it('has reply.metadata with every field of §2.2', function () {
    const line = /`reply\.metadata` fields: (.*)\./.exec(text)![1]!;
    const schema = resolveLocal(asyncapi, asyncapi.components.schemas.ReplyMetadata);
    expect(Object.keys(schema.properties).sort()).to.deep.equal(fieldNames(line).sort());
  });

  for (const [sub, receiver] of [
    ['7.1', 'app'],
    ['7.2', 'agent'],
    ['7.3', 'connection'],
  ] as const) {
    it(`has every code of §${sub} in the catalogue, received by ${receiver === 'connection' ? 'both sides before a close' : `the ${receiver}`}`, function () {
      const codes = rows(section(sub)).map(([code]) => code as ErrorCode);
      expect(codes, `§${sub}`).to.not.be.empty;
      for (const code of codes) {
        const entry = ERRORS[code];
        expect(entry, code).to.not.equal(undefined);
        if (receiver === 'connection') {
          expect(entry.scope, code).to.equal('connection');
          expect(entry.receivers, code).to.include.members(['app', 'agent']);
        } else {
          expect(entry.receivers as readonly string[], code).to.include(receiver);
        }
      }
    });
  }

  it('has the limits of §8 with the same values', function () {
    const limits = section('8');
    const number = (re: RegExp) => Number(re.exec(limits)?.[1]);
    expect(LIMITS.payloadMaxBytes).to.equal(number(/Payload size \| (\d+) bytes/));
    expect(LIMITS.tokenFragmentMaxBytes).to.equal(number(/Token fragment size \| (\d+)KB/) * 1024);
    expect(LIMITS.sessionKeyMaxChars).to.equal(number(/Session key length \| (\d+) characters/));
    expect(LIMITS.connectionsPerAgent).to.equal(number(/Connections per agent \| (\d+)/));
    expect(LIMITS.heartbeatIntervalMs).to.equal(number(/ping every (\d+) s/) * 1000);
    expect(LIMITS.heartbeatTimeoutMs).to.equal(number(/pong expected within (\d+) s/) * 1000);
    expect(LIMITS.reconnectBaseDelayMs).to.equal(number(/start (\d+) s, doubling/) * 1000);
    expect(LIMITS.reconnectMaxDelayMs).to.equal(number(/cap (\d+) s/) * 1000);
    expect(LIMITS.appReconnectMaxAttempts).to.equal(number(/allows (\d+) attempts/));
    expect(LIMITS.connectorReconnectMaxAttempts).to.equal(number(/Connector default is (\d+)/));
    expect(LIMITS.agentTimeoutMs).to.be.at.least(number(/typically (\d+) minutes or more/) * 60_000);
    expect(LIMITS.sessionTtlDefaultDays).to.equal(number(/Default (\d+) days/));
    expect(LIMITS.rotationGraceMs).to.equal(number(/Token rotation grace \| (\d+) hour/) * 3_600_000);
  });
});
