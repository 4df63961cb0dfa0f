// Which specs docs/ was rendered from: `npm run docs` writes the digests, `npm run gen:check` compares them, so stale
// HTML documentation fails CI like a stale generated/ does, without CI installing the renderers (about 480 MB).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

export const ASYNCAPI_FILE = resolve(import.meta.dirname, '../spec/asyncapi.yaml');
export const OPENAPI_FILE = resolve(import.meta.dirname, '../spec/openapi.yaml');
/** The documents docs/ renders: the protocol's page (docs/index.html) and the HTTP API's (docs/http/). */
const SPEC_FILES = [ASYNCAPI_FILE, OPENAPI_FILE];
export const DOCS_DIR = resolve(import.meta.dirname, '../docs');
export const DIGEST_FILE = 'spec-digest.txt';

/** One line per document: `asyncapi.yaml sha256:…`. */
export function specDigest(): string {
  return SPEC_FILES.map(
    (file) => `${basename(file)} sha256:${createHash('sha256').update(readFileSync(file)).digest('hex')}`,
  ).join('\n');
}

/** Why docs/ does not match the specs, or undefined when it does. */
export function docsStaleness(): string | undefined {
  const file = join(DOCS_DIR, DIGEST_FILE);
  if (!existsSync(file)) return 'docs/ is missing';
  const rendered = new Set(readFileSync(file, 'utf8').trim().split('\n'));
  const stale = specDigest()
    .split('\n')
    .filter((line) => !rendered.has(line))
    .map((line) => `spec/${line.split(' ')[0]}`);
  if (stale.length) return `docs/ was rendered from another ${stale.join(' and another ')}`;
  return undefined;
}
