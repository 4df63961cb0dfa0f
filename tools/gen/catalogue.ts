// The error catalogue, close codes, limits and field-to-code rules as typed constants, from the AsyncAPI
// document's root extensions. The generator refuses a spec whose extensions disagree with its own schemas, so
// the numbers a schema states (maxLength, enums) and the numbers the catalogue states can never drift apart.
import type { Definitions, Schema } from './schemas.js';
import { memberTypes } from './schemas.js';

interface CatalogueEntry {
  origin: string;
  receivers: string[];
  scope: string;
  retry: boolean;
  messages?: Record<string, string>;
  cause: string;
  close_code?: number;
  http_status?: number;
}

const RECEIVERS = new Set(['app', 'agent', 'http']);
const SCOPES = new Set(['event', 'frame', 'connection', 'http']);
const ORIGINS = new Set(['protocol', 'decision', 'extension']);

function fail(message: string): never {
  throw new Error(`asyncapi.yaml: ${message}`);
}

export function checkCatalogue(tree: Schema, defs: Definitions): Record<string, CatalogueEntry> {
  const catalogue = (tree['x-error-catalogue'] ?? fail('x-error-catalogue is missing')) as Record<
    string,
    CatalogueEntry
  >;
  const enumCodes: string[] = defs.all.get('ErrorCode')?.enum ?? fail('components.schemas.ErrorCode has no enum');
  const missing = enumCodes.filter((c) => !(c in catalogue));
  const extra = Object.keys(catalogue).filter((c) => !enumCodes.includes(c));
  if (missing.length || extra.length) {
    fail(
      `ErrorCode enum and x-error-catalogue differ (only in the enum: ${missing.join(', ') || 'none'}; only in the catalogue: ${extra.join(', ') || 'none'})`,
    );
  }
  const closeCodes = new Map<number, string>();
  for (const [code, entry] of Object.entries(catalogue)) {
    if (!entry.receivers?.length || entry.receivers.some((r) => !RECEIVERS.has(r)))
      fail(`${code}: receivers must be some of app, agent, http`);
    if (!SCOPES.has(entry.scope)) fail(`${code}: scope must be event, frame, connection or http`);
    if (!ORIGINS.has(entry.origin)) fail(`${code}: origin must be protocol, decision or extension`);
    if (!entry.cause) fail(`${code}: cause is missing`);
    if (typeof entry.retry !== 'boolean') fail(`${code}: retry must be true or false`);
    for (const [situation, text] of Object.entries(entry.messages ?? {})) {
      if (!/^[a-z_]+$/.test(situation) || typeof text !== 'string' || !text)
        fail(`${code}: messages.${situation} must be a non-empty text named in snake_case`);
      const stray = text.replace(/\{[a-z_]+\}/g, '').match(/[{}]/);
      if (stray) fail(`${code}: messages.${situation} has a brace that is not a {placeholder}`);
    }
    if (entry.scope === 'connection') {
      const close = entry.close_code;
      if (!close || close < 4000 || close > 4999) fail(`${code}: a connection error needs a close_code in 4000-4999`);
      if (closeCodes.has(close)) fail(`${code}: close_code ${close} is also ${closeCodes.get(close)}'s`);
      closeCodes.set(close, code);
    }
    if (entry.receivers.includes('http') && !entry.http_status)
      fail(`${code}: an error HTTP clients receive needs http_status`);
  }
  return catalogue;
}

export function checkLimits(
  tree: Schema,
  defs: Definitions,
): Record<string, { value: number; unit: string; applies_to: string; description: string }> {
  const limits = tree['x-limits'] ?? fail('x-limits is missing');
  const value = (name: string): number => limits[name]?.value ?? fail(`x-limits.${name} is missing`);
  const maxLength = (schema: string): number => defs.all.get(schema)?.maxLength ?? fail(`${schema} has no maxLength`);
  const agreements: [string, number, number][] = [
    ['AgentId.maxLength = idMaxChars', maxLength('AgentId'), value('idMaxChars')],
    ['AppId.maxLength = idMaxChars', maxLength('AppId'), value('idMaxChars')],
    ['ThreadId.maxLength = threadIdMaxChars', maxLength('ThreadId'), value('threadIdMaxChars')],
    ['SessionKey.maxLength = sessionKeyMaxChars', maxLength('SessionKey'), value('sessionKeyMaxChars')],
    [
      'threadIdMaxChars = sessionKeyMaxChars - len("svc:") - 2 * idMaxChars - 2',
      value('threadIdMaxChars'),
      value('sessionKeyMaxChars') - 4 - 2 * value('idMaxChars') - 2,
    ],
    // Every reply to an app fits one frame (L16): its text, the payload echo and the rest of the frame.
    [
      'replyContentMaxBytes = frameMaxBytes - payloadMaxBytes - replyEnvelopeMaxBytes',
      value('replyContentMaxBytes'),
      value('frameMaxBytes') - value('payloadMaxBytes') - value('replyEnvelopeMaxBytes'),
    ],
  ];
  // Bounds that only need an order: a larger left side would make the right one unreachable or break it.
  const atMost: [string, number, number][] = [
    ['frameMaxBytes <= sendBufferMaxBytes', value('frameMaxBytes'), value('sendBufferMaxBytes')],
    ['streamedTextMaxBytes <= replyContentMaxBytes', value('streamedTextMaxBytes'), value('replyContentMaxBytes')],
    // A sum across connections below one connection's bound would close a client that reads, or sends, within it (L19, L20).
    [
      'sendBufferMaxBytes <= sendBufferPerAgentMaxBytes',
      value('sendBufferMaxBytes'),
      value('sendBufferPerAgentMaxBytes'),
    ],
    ['sendBufferMaxBytes <= sendBufferPerAppMaxBytes', value('sendBufferMaxBytes'), value('sendBufferPerAppMaxBytes')],
    [
      'sendBufferPerAppMaxBytes <= sendBufferTotalMaxBytes',
      value('sendBufferPerAppMaxBytes'),
      value('sendBufferTotalMaxBytes'),
    ],
    [
      'frameMaxBytes <= partialMessagesPerAgentMaxBytes',
      value('frameMaxBytes'),
      value('partialMessagesPerAgentMaxBytes'),
    ],
    ['frameMaxBytes <= partialMessagesPerAppMaxBytes', value('frameMaxBytes'), value('partialMessagesPerAppMaxBytes')],
    [
      'partialMessagesPerAppMaxBytes <= partialMessagesTotalMaxBytes',
      value('partialMessagesPerAppMaxBytes'),
      value('partialMessagesTotalMaxBytes'),
    ],
  ];
  for (const [rule, actual, expected] of agreements)
    if (actual !== expected) fail(`${rule} does not hold (${actual} vs ${expected})`);
  for (const [rule, actual, bound] of atMost) if (actual > bound) fail(`${rule} does not hold (${actual} vs ${bound})`);
  for (const [name, limit] of Object.entries<any>(limits)) {
    if (typeof limit?.value !== 'number' || !limit.unit || !limit.description)
      fail(`x-limits.${name} needs value, unit and description`);
  }
  return limits;
}

function doc(text: string, indent = ''): string {
  return `${indent}/** ${text.replace(/\*\//g, '*\\/').replace(/\s+/g, ' ').trim()} */`;
}

/** Each entry of `node` but those marked `x-internal` (the bus between nodes and its Redis: not for clients). */
const forClients = <T>(node: Record<string, T>): [string, T][] =>
  Object.entries(node).filter(([, value]) => (value as Schema)['x-internal'] !== true);

/** Each channel's full path (the server's pathname, then the channel's address), by channel name: the client kinds. */
export function endpointPaths(tree: Schema, defs: Definitions): Record<string, string> {
  const servers = forClients<{ pathname?: string }>(tree.servers ?? fail('servers is missing')).map(([, s]) => s);
  const pathnames = new Set(servers.map((s) => s.pathname ?? ''));
  if (pathnames.size !== 1) fail('every server needs the same pathname (the interface version)');
  const [base] = pathnames;
  const channels = forClients<{ address?: string }>(tree.channels ?? fail('channels is missing'));
  const kinds: string[] = defs.all.get('ClientKind')?.enum ?? fail('components.schemas.ClientKind has no enum');
  if (kinds.join() !== channels.map(([name]) => name).join())
    fail(`ClientKind's enum (${kinds.join(', ')}) must name the channels (${channels.map(([n]) => n).join(', ')})`);
  return Object.fromEntries(
    channels.map(([name, c]) => [name, `${base}${c.address ?? fail(`channels.${name} has no address`)}`]),
  );
}

export function catalogueModule(tree: Schema, defs: Definitions): string {
  const catalogue = checkCatalogue(tree, defs);
  const limits = checkLimits(tree, defs);
  const extraCloses = (tree['x-close-codes'] ?? {}) as Record<string, { code: number; cause: string }>;
  const out: string[] = [];
  out.push(`import type { ClientKind, ErrorCode } from './messages.js';`, '');
  out.push(`/** Who receives an error: an app or agent connection, or an HTTP client. */`);
  out.push(`export type ErrorReceiver = 'app' | 'agent' | 'http';`, '');
  out.push(
    `/** event: ends one event; frame: refuses one frame; connection: error, then close; http: an HTTP error body. */`,
  );
  out.push(`export type ErrorScope = 'event' | 'frame' | 'connection' | 'http';`, '');
  out.push(
    `/** protocol: a code the protocol names; decision: this implementation's, where it names none; extension: an opt-in extension's. */`,
  );
  out.push(`export type ErrorOrigin = 'protocol' | 'decision' | 'extension';`, '');
  out.push(`export interface ErrorSpec {`);
  out.push(
    `  /** Where the code comes from: the conformance suite's profiles send and expect only their origins' codes. */`,
  );
  out.push(`  readonly origin: ErrorOrigin;`);
  out.push(`  readonly receivers: readonly ErrorReceiver[];`);
  out.push(`  readonly scope: ErrorScope;`);
  out.push(`  /** Whether the same request (or, for a connection error, a reconnect) can succeed later unchanged. */`);
  out.push(`  readonly retry: boolean;`);
  out.push(`  readonly cause: string;`);
  out.push(`  readonly closeCode?: number;`);
  out.push(`  readonly httpStatus?: number;`);
  out.push(`}`, '');
  out.push(`/** The error catalogue: every code, who receives it, how it is reported. */`);
  out.push(`export const ERRORS = {`);
  for (const [code, e] of Object.entries(catalogue)) {
    // Every entry has every key (undefined where the code has none) and receivers as a plain list, so that
    // ERRORS[code] for any ErrorCode reads without a cast.
    const fields = [
      `origin: ${JSON.stringify(e.origin)}`,
      `receivers: ${JSON.stringify(e.receivers)} as readonly ErrorReceiver[]`,
      `scope: ${JSON.stringify(e.scope)}`,
      `retry: ${e.retry}`,
      `cause: ${JSON.stringify(e.cause)}`,
      `closeCode: ${e.close_code ?? 'undefined'}`,
      `httpStatus: ${e.http_status ?? 'undefined'}`,
    ];
    out.push(`  ${code}: { ${fields.join(', ')} },`);
  }
  out.push(`} as const satisfies Record<ErrorCode, ErrorSpec>;`, '');
  out.push(
    `/** The texts this implementation writes for a code, by situation; \`{name}\` is a placeholder (see src/shared/error-text.ts). */`,
  );
  out.push(`export const ERROR_MESSAGES = {`);
  for (const [code, e] of Object.entries(catalogue))
    if (e.messages) out.push(`  ${code}: ${JSON.stringify(e.messages)},`);
  out.push(`} as const satisfies Partial<Record<ErrorCode, Record<string, string>>>;`, '');
  out.push(`/** Every error code, in catalogue order. */`);
  out.push(`export const ERROR_CODES: readonly ErrorCode[] = ${JSON.stringify(Object.keys(catalogue))};`, '');
  out.push(`/** Every WebSocket close code the service uses, by name. */`);
  out.push(`export const CLOSE_CODES = {`);
  for (const [code, e] of Object.entries(catalogue)) if (e.close_code) out.push(`  ${code}: ${e.close_code},`);
  for (const [name, c] of Object.entries(extraCloses)) {
    out.push(doc(c.cause, '  '));
    out.push(`  ${name}: ${c.code},`);
  }
  out.push(`} as const;`, '');
  out.push(`export type CloseCode = (typeof CLOSE_CODES)[keyof typeof CLOSE_CODES];`, '');
  out.push(`/** The protocol's limits and defaults. */`);
  out.push(`export const LIMITS = {`);
  for (const [name, l] of Object.entries(limits)) {
    out.push(doc(`${l.description} (${l.unit}; ${l.applies_to})`, '  '));
    out.push(`  ${name}: ${l.value},`);
  }
  out.push(`} as const;`, '');
  out.push(
    `/** The WebSocket endpoints: the path each kind of client connects to (servers' pathname + channel address). */`,
  );
  out.push(
    `export const ENDPOINT_PATHS = ${JSON.stringify(endpointPaths(tree, defs))} as const satisfies Record<ClientKind, string>;`,
    '',
  );
  out.push(
    `/** Per direction and message type: the code to answer when a field fails its schema (otherwise INVALID_MESSAGE). */`,
  );
  out.push(`export const FIELD_ERROR_CODES = {`);
  for (const [union, members] of defs.unions) {
    const byType = members
      .filter((m) => defs.fieldErrorCodes.has(m))
      .map((m) => {
        const fields = defs.fieldErrorCodes.get(m)!;
        for (const code of Object.values(fields)) {
          if (!(code in catalogue)) fail(`${m}: x-field-error-codes names unknown code ${code}`);
          // The core words every schema failure with the `invalid` text of the code it answers with.
          if (!catalogue[code]!.messages?.invalid)
            fail(`${code}: answers a field's schema failure, so it needs messages.invalid`);
        }
        return `${JSON.stringify(defs.all.get(m)?.properties?.type?.const)}: ${JSON.stringify(fields)}`;
      });
    out.push(`  ${union}: { ${byType.join(', ')} },`);
  }
  out.push(`} as const satisfies Record<string, Record<string, Record<string, ErrorCode>>>;`, '');
  out.push(`/** The \`type\` values of each direction's messages. */`);
  out.push(`export const MESSAGE_TYPES = {`);
  for (const union of defs.unions.keys()) out.push(`  ${union}: ${JSON.stringify(memberTypes(defs, union))},`);
  out.push(`} as const;`);
  return out.join('\n') + '\n';
}
