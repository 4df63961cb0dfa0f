// GET /docs/: the protocol's HTML documentation, rendered from spec/asyncapi.yaml by `npm run docs` into docs/ (at
// the repository's root, or dist/docs in the installed package). Only the files found there at start are served,
// so no request path reaches the file system.
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { extname } from 'node:path';
import type { Context, Next } from 'koa';
import { problem } from '../admin/problem.js';
import { STATIC_CONTENT_TYPES } from './content-types.js';

const DIR = new URL('../../docs/', import.meta.url);
// The page is generated from our own spec, but it is still no one's business to frame or sniff it.
const HEADERS = { 'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'no-referrer' };

function docFiles(): Map<string, { type: string; path: URL }> {
  const files = new Map<string, { type: string; path: URL }>();
  if (!existsSync(DIR)) return files;
  for (const name of readdirSync(DIR, { recursive: true, encoding: 'utf8' })) {
    const type = STATIC_CONTENT_TYPES[extname(name)];
    if (type) files.set(name.replaceAll('\\', '/'), { type, path: new URL(name, DIR) });
  }
  return files;
}

/** Answers GET and HEAD under /docs; everything else goes on to the next middleware. */
export function docsPages() {
  const files = docFiles();
  return async function docs(ctx: Context, next: Next): Promise<void> {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !(ctx.path === '/docs' || ctx.path.startsWith('/docs/')))
      return next();
    // The page loads js/ and css/ by relative address, which resolves under /docs/ only with the slash.
    if (ctx.path === '/docs') return ctx.redirect('/docs/');
    const name = ctx.path.slice('/docs/'.length) || 'index.html';
    const file = files.get(name);
    if (!file) {
      throw problem('NOT_FOUND', files.size === 0 ? 'docs_not_built' : 'docs_file', { file: name.slice(0, 80) });
    }
    ctx.set(HEADERS);
    ctx.type = file.type;
    ctx.body = createReadStream(file.path); // 2.5 MB for the UI script: streamed, never read whole in the request
  };
}
