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
    .filter((e) => e.isFile() && /\.[cm]?[jt]s$/.test(e.name) && !e.parentPath.split(sep).includes('node_modules')) // tools/docs installs one
    .map((e) => join(e.parentPath, e.name));
}

/** Every relative import of `file`, as a path from the repository's root (`.js` read as the `.ts` it compiles from). */
function importsOf(file: string): string[] {
  return ts
    .preProcessFile(readFileSync(file, 'utf8'), true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((specifier) => specifier.startsWith('.')) // node: built-ins and packages are not layers
    .map((specifier) =>
      relative(ROOT, resolve(dirname(file), specifier))
        .split(sep)
        .join('/')
        .replace(/\.js$/, '.ts'),
    );
}

const under = (path: string, places: string[]) => places.some((p) => path === p || path.startsWith(`${p}/`));

/** `file -> target` for every import of a file under `dir` that leaves the places it may use. */
function outside(dir: string, allowed: string[]): string[] {
  return sourceFiles(dir).flatMap((file) =>
    importsOf(file)
      .filter((t) => !under(t, allowed))
      .map((t) => `${relative(ROOT, file)} -> ${t}`),
  );
}

/** `file -> target` for every import of a file under `dir` that lands in a forbidden place. */
function into(dir: string, forbidden: string[]): string[] {
  return sourceFiles(dir).flatMap((file) =>
    importsOf(file)
      .filter((t) => under(t, forbidden))
      .map((t) => `${relative(ROOT, file)} -> ${t}`),
  );
}

/**
 * Each circle of imports among the files under `dirs` (type-only imports too), as `a -> b -> a`: in a circle no file
 * can be read, tested or moved without the others, and which one runs first depends on who imported whom.
 */
function circles(dirs: string[]): string[] {
  const name = (file: string) => relative(ROOT, file).split(sep).join('/');
  const graph = new Map(dirs.flatMap(sourceFiles).map((file) => [name(file), importsOf(file)]));
  const found: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    if (done.has(file) || !graph.has(file)) return;
    const at = path.indexOf(file);
    if (at >= 0) {
      found.push([...path.slice(at), file].join(' -> '));
      return;
    }
    path.push(file);
    for (const target of graph.get(file)!) visit(target);
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return found;
}

describe('layering of the sources', function () {
  it('reads the imports it judges (the reader is not blind)', function () {
    expect(importsOf(join(ROOT, 'src/ws/upgrade.ts'))).to.include('src/core/bridge.ts');
    expect(sourceFiles('src/sdk')).to.not.be.empty;
  });

  it('the SDK (src/sdk) imports only itself, src/shared and generated/', function () {
    expect(outside('src/sdk', ['src/sdk', 'src/shared', 'generated'])).to.deep.equal([]);
  });

  it('the conformance suite (conformance/) imports only itself and generated/: it ships without the server or the SDK', function () {
    expect(outside('conformance', ['conformance', 'generated'])).to.deep.equal([]);
  });

  it('generated/ imports nothing of the repository: the protocol package stands alone', function () {
    expect(outside('generated', ['generated'])).to.deep.equal([]);
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

  it('no import circle in src/, conformance/, tools/ or bench/', function () {
    expect(circles(['src', 'conformance', 'tools', 'bench'])).to.deep.equal([]);
  });

  it('http/ never imports the dashboard, and no adapter imports what puts them together', function () {
    expect(into('src/http', ['src/dashboard'])).to.deep.equal([]);
    for (const adapter of ['src/ws', 'src/http', 'src/store', 'src/dashboard', 'src/admin', 'src/ops']) {
      expect(into(adapter, ['src/server.ts', 'src/server', 'src/web-app.ts']), adapter).to.deep.equal([]);
    }
  });
});
