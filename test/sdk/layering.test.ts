// The SDK ships to app and agent authors on its own, so it may not reach into the server; `src/shared/` is what
// both sides use and so may reach into neither. Read from each file's import specifiers (static, dynamic and
// `export … from`), so a new import anywhere is caught before it is published.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.[cm]?[jt]s$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** `file: specifier` for every relative import of a file under `dir` that leaves the folders it may use. */
function importsOutside(dir: string, allowed: string[]): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(dir)) {
    for (const { fileName: specifier } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!specifier.startsWith('.') && !specifier.startsWith('/')) continue; // node: built-ins and packages
      const target = relative(ROOT, resolve(dirname(file), specifier)).split(sep).join('/');
      if (!allowed.some((folder) => target.startsWith(`${folder}/`))) found.push(`${relative(ROOT, file)}: ${specifier}`);
    }
  }
  return found;
}

describe('layering', function () {
  it('the SDK (src/sdk) imports only itself, src/shared and generated/', function () {
    expect(sourceFiles('src/sdk')).to.not.be.empty;
    expect(importsOutside('src/sdk', ['src/sdk', 'src/shared', 'generated'])).to.deep.equal([]);
  });

  it('src/shared imports nothing of the server or the SDK', function () {
    expect(importsOutside('src/shared', ['src/shared'])).to.deep.equal([]);
  });
});
