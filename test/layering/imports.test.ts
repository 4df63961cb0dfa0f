// Imports point down: the SDK ships to app and agent authors on its own, so it may not reach into the server;
// `src/shared/` is what both use, so it reaches into neither; adapters use the core, never the reverse; the
// dashboard uses http/, never the reverse. Read from each file's import specifiers (static, dynamic and
// `export … from`), so an arrow that runs back up fails here, not in a review.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.[cm]?[jt]s$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** Every relative import of `file`, as a path from the repository's root (`.js` read as the `.ts` it compiles from). */
function importsOf(file: string): string[] {
  return ts
    .preProcessFile(readFileSync(file, 'utf8'), true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((specifier) => specifier.startsWith('.')) // node: built-ins and packages are not layers
    .map((specifier) => relative(ROOT, resolve(dirname(file), specifier)).split(sep).join('/').replace(/\.js$/, '.ts'));
}

const under = (path: string, places: string[]) => places.some((p) => path === p || path.startsWith(`${p}/`));

/** `file -> target` for every import of a file under `dir` that leaves the places it may use. */
function outside(dir: string, allowed: string[]): string[] {
  return sourceFiles(dir).flatMap((file) => importsOf(file).filter((t) => !under(t, allowed)).map((t) => `${relative(ROOT, file)} -> ${t}`));
}

/** `file -> target` for every import of a file under `dir` that lands in a forbidden place. */
function into(dir: string, forbidden: string[]): string[] {
  return sourceFiles(dir).flatMap((file) => importsOf(file).filter((t) => under(t, forbidden)).map((t) => `${relative(ROOT, file)} -> ${t}`));
}

describe('layering of the sources', function () {
  it('reads the imports it judges (the reader is not blind)', function () {
    expect(importsOf(join(ROOT, 'src/ws/upgrade.ts'))).to.include('src/core/bridge.ts');
    expect(sourceFiles('src/sdk')).to.not.be.empty;
  });

  it('the SDK (src/sdk) imports only itself, src/shared and generated/', function () {
    expect(outside('src/sdk', ['src/sdk', 'src/shared', 'generated'])).to.deep.equal([]);
  });

  it('the SDK, src/shared and generated/ need no package but ws and yaml (the client package depends on nothing else)', function () {
    const packages = ['src/sdk', 'src/shared', 'generated'].flatMap(sourceFiles).flatMap((file) =>
      ts
        .preProcessFile(readFileSync(file, 'utf8'), true, true)
        .importedFiles.map((i) => i.fileName)
        .filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:'))
        .filter((specifier) => specifier !== 'ws' && specifier !== 'yaml')
        .map((specifier) => `${relative(ROOT, file)} -> ${specifier}`),
    );
    expect(packages).to.deep.equal([]);
  });

  it('src/shared imports nothing of the server or the SDK (generated/ it may)', function () {
    expect(outside('src/shared', ['src/shared', 'generated'])).to.deep.equal([]);
  });

  it('the core imports no adapter, store, SDK or anything else above it', function () {
    expect(outside('src/core', ['src/core', 'src/shared', 'generated'])).to.deep.equal([]);
  });

  it('the cluster layer (src/cluster) builds on the core only, and nothing below it reaches up into it', function () {
    expect(outside('src/cluster', ['src/cluster', 'src/core', 'src/shared', 'generated'])).to.deep.equal([]);
  });

  it('http/ never imports the dashboard, and no adapter imports what puts them together', function () {
    expect(into('src/http', ['src/dashboard'])).to.deep.equal([]);
    for (const adapter of ['src/ws', 'src/http', 'src/store', 'src/dashboard', 'src/admin']) {
      expect(into(adapter, ['src/server.ts', 'src/web-app.ts']), adapter).to.deep.equal([]);
    }
  });
});
