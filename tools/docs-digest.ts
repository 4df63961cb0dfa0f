// Which spec docs/ was rendered from: `npm run docs` writes the digest, `npm run gen:check` compares it, so stale
// HTML documentation fails CI like a stale generated/ does, without CI installing the 400 MB template.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const SPEC_FILE = resolve(import.meta.dirname, '../spec/asyncapi.yaml');
export const DOCS_DIR = resolve(import.meta.dirname, '../docs');
export const DIGEST_FILE = 'spec-digest.txt';

export function specDigest(): string {
  return `sha256:${createHash('sha256').update(readFileSync(SPEC_FILE)).digest('hex')}`;
}

/** Why docs/ does not match the spec, or undefined when it does. */
export function docsStaleness(): string | undefined {
  const file = join(DOCS_DIR, DIGEST_FILE);
  if (!existsSync(file)) return 'docs/ is missing';
  if (readFileSync(file, 'utf8').trim() !== specDigest()) return 'docs/ was rendered from another spec/asyncapi.yaml';
  return undefined;
}
