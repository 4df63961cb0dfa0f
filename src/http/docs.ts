// GET /docs/: the HTML documentation rendered by `npm run docs` into docs/ (at the repository's root, or dist/docs in
// the installed package): the protocol's page (spec/asyncapi.yaml) at /docs/ and the HTTP API's (spec/openapi.yaml)
// at /docs/http/. Only the files found there at start are served, so no request path reaches the file system.
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { extname } from 'node:path';
import type { Context, Next } from 'koa';
import { problem } from '../admin/problem.js';
import { STATIC_CONTENT_TYPES } from './content-types.js';

const DIR = new URL('../../docs/', import.meta.url);
// The pages are generated from our own specs, but it is still no one's business to frame or sniff them, and they load
// nothing from anywhere but the bridge. Styles may be inline (both renderers set them from their scripts), and
// Redoc's search runs in a worker it makes from a blob.
const csp = (script: string) =>
  [
    "default-src 'self'",
    `script-src ${script}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
const HEADERS = { 'X-Content-Type-Options': 'nosniff', 'X-Frame-Options': 'DENY', 'Referrer-Policy': 'no-referrer' };
/** The HTTP API's page (Redoc) runs without eval. */
const HTTP_PAGE_CSP = csp("'self'");
/**
 * The protocol's page does not: the AsyncAPI template's script compiles JSON Schemas (ajv) into functions as it
 * starts, and without them it does not start at all. It shows only our spec, and loads nothing from elsewhere.
 */
const PROTOCOL_PAGE_CSP = csp("'self' 'unsafe-eval'");

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
    // A page loads its files by relative address, which resolves under its own directory only with the slash.
    if (ctx.path === '/docs') return ctx.redirect('/docs/');
    const name = ctx.path.slice('/docs/'.length);
    if (name && !name.endsWith('/') && files.has(`${name}/index.html`)) return ctx.redirect(`${ctx.path}/`);
    const file = files.get(name === '' || name.endsWith('/') ? `${name}index.html` : name);
    if (!file) {
      throw problem('NOT_FOUND', files.size === 0 ? 'docs_not_built' : 'docs_file', { file: name.slice(0, 80) });
    }
    ctx.set(HEADERS);
    ctx.set('Content-Security-Policy', name.startsWith('http/') ? HTTP_PAGE_CSP : PROTOCOL_PAGE_CSP);
    ctx.type = file.type;
    ctx.body = createReadStream(file.path); // 2.5 MB for the UI script: streamed, never read whole in the request
  };
}
