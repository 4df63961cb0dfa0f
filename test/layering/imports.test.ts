// Imports point down: adapters use the core, never the reverse; the dashboard uses http/, never the reverse. Read
// from the import specifiers of the sources, so a new arrow that runs back up fails here, not in a review.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

/** Every relative import of `file`, as a path from the repository's root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specifiers = [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"](\.[^'"]+)['"]/gm)].map((m) => m[1]!);
  return specifiers.map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)).replace(/\.js$/, '.ts'));
}

const under = (path: string, folders: string[]) => folders.some((f) => path === f || path.startsWith(`${f}/`));

/** The imports of files under `dir` that land outside the allowed folders. */
function outside(dir: string, allowed: string[]): string[] {
  return sources(dir).flatMap((file) => importsOf(file).filter((t) => !under(t, allowed)).map((t) => `${file} -> ${t}`));
}

/** The imports of files under `dir` that land in a forbidden folder or file. */
function into(dir: string, forbidden: string[]): string[] {
  return sources(dir).flatMap((file) => importsOf(file).filter((t) => under(t, forbidden)).map((t) => `${file} -> ${t}`));
}

describe('layering of the sources', function () {
  it('finds the imports it judges (the reader is not blind)', function () {
    expect(importsOf('src/ws/upgrade.ts')).to.include('src/core/bridge.ts');
  });

  it('keeps the core free of adapters, the store, the SDK and everything else above it', function () {
    expect(outside('src/core', ['src/core', 'src/shared', 'generated'])).to.deep.equal([]);
  });

  it('lets the dashboard use http/, never http/ the dashboard', function () {
    expect(into('src/http', ['src/dashboard', 'src/web-app.ts', 'src/server.ts'])).to.deep.equal([]);
  });

  it('keeps the adapters below the server that puts them together', function () {
    for (const adapter of ['src/ws', 'src/store', 'src/dashboard', 'src/admin']) expect(into(adapter, ['src/server.ts', 'src/web-app.ts']), adapter).to.deep.equal([]);
  });
});
