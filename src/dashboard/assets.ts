// The dashboard's files, read once at start: the page, its ES modules and style sheet, plus `spec.js`, written
// here from generated/ so that the page validates its forms by the spec's rules without restating them.
import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { STATIC_CONTENT_TYPES } from '../http/content-types.js';
import { ERRORS, ERROR_CODES, FIELD_BOUNDS, LIMITS, QUERY_PARAMETERS } from '../../generated/index.js';

export interface Asset {
  type: string;
  body: Buffer;
}

const DIR = new URL('./assets/', import.meta.url);

/**
 * Field rules of the admin API's request bodies (spec/openapi.yaml OrganizationCreate, AppCreate, AgentCreate and
 * asyncapi.yaml AppId, ThreadId) and of its listings' `q` and `limit`, read from generated/; the id and thread
 * patterns live only inside the validators, so they are named here and a test holds them equal to the spec.
 */
export const FIELD_RULES = {
  nameMaxLength: FIELD_BOUNDS.AgentCreate.name.maxLength,
  descriptionMaxLength: FIELD_BOUNDS.AgentCreate.description.maxLength,
  ttlDaysMin: FIELD_BOUNDS.AgentCreate.ttl_days.minimum,
  ttlDaysMax: FIELD_BOUNDS.AgentCreate.ttl_days.maximum,
  idPattern: '^[a-z0-9-]+$',
  idMaxLength: LIMITS.idMaxChars,
  searchMaxLength: QUERY_PARAMETERS.listOrganizations.q.maxLength,
  pageMax: QUERY_PARAMETERS.listOrganizations.limit.maximum,
  threadIdPattern: '^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]+$',
  threadIdMaxLength: LIMITS.threadIdMaxChars,
  testEventThread: FIELD_BOUNDS.TestEvent.thread_id.default,
} as const;

function specModule(): string {
  const eventCodes = ERROR_CODES.filter((code) => ERRORS[code].receivers.includes('app'));
  return [
    '// Written by the bridge from generated/ (src/dashboard/assets.ts).',
    `export const FIELD_RULES = ${JSON.stringify({ ...FIELD_RULES, ttlDaysDefault: LIMITS.sessionTtlDefaultDays })};`,
    `export const EVENT_ERROR_CODES = ${JSON.stringify(eventCodes)};`,
    `export const ROTATION_GRACE_MS = ${LIMITS.rotationGraceMs};`,
    `export const LIMITS = ${JSON.stringify(LIMITS)};`,
    '',
  ].join('\n');
}

/** The page, and the files it loads by name. */
export function loadAssets(): { page: Asset; files: Map<string, Asset> } {
  const files = new Map<string, Asset>();
  for (const name of readdirSync(DIR)) {
    const type = STATIC_CONTENT_TYPES[extname(name)];
    if (type) files.set(name, { type, body: readFileSync(new URL(name, DIR)) });
  }
  files.set('spec.js', { type: STATIC_CONTENT_TYPES['.js']!, body: Buffer.from(specModule()) });
  const page = files.get('index.html')!;
  files.delete('index.html');
  return { page, files };
}
