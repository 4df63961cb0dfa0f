// The packages by audience (packages/*/manifest.json, staged by tools/packages/): what a folder's modules import
// from npm must be what its package depends on, so a client install never pulls the server's dependencies and a
// forgotten dependency fails here, in seconds, not only in the package test. Relative imports between folders of
// different packages are the layering test's (imports.test.ts) and the stager's.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import ts from 'typescript';
import { PACKAGES, type PackageKey } from '../../tools/packages/contents.js';
import { isBuiltin, packageOf } from '../../tools/packages/imports.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** The source folders of each package: its compiled entries, read back from dist/… to the sources. */
function sourceFolders(key: PackageKey): { dir: string; except: string[] }[] {
  const p = PACKAGES.find((c) => c.key === key)!;
  return p.entries
    .filter((e) => e.compiled)
    .map((e) => ({ dir: e.from.replace(/^dist\//, ''), except: e.except ?? [] }));
}

function externalImports(key: PackageKey): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const { dir, except } of sourceFolders(key)) {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
      const file = join(entry.parentPath, entry.name);
      const inside = file.slice(join(ROOT, dir).length + 1);
      if (!entry.isFile() || !entry.name.endsWith('.ts') || except.some((e) => inside.startsWith(`${e}/`))) continue;
      for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
        if (fileName.startsWith('.') || isBuiltin(fileName)) continue;
        const name = packageOf(fileName);
        found.set(name, [...(found.get(name) ?? []), file.slice(ROOT.length + 1)]);
      }
    }
  }
  return found;
}

const declared = (key: PackageKey): string[] => {
  const manifest = JSON.parse(readFileSync(join(ROOT, `packages/${key}/manifest.json`), 'utf8')) as {
    dependencies: string[];
    peerDependencies?: string[];
  };
  return [...manifest.dependencies, ...(manifest.peerDependencies ?? [])];
};

describe('what each package imports from npm', function () {
  it('reads the imports it judges (the reader is not blind)', function () {
    expect([...externalImports('server').keys()]).to.include.members(['koa', 'knex']);
  });

  for (const key of ['protocol', 'client', 'conformance', 'server'] as const) {
    it(`${key}: only its declared dependencies`, function () {
      const undeclared = [...externalImports(key)]
        .filter(([name]) => !declared(key).includes(name))
        .map(([name, files]) => `${name} (${files.join(', ')})`);
      expect(undeclared).to.deep.equal([]);
    });
  }

  it('the protocol depends on nothing, the client and the conformance runner on no server dependency', function () {
    expect(declared('protocol')).to.deep.equal([]);
    const serverOnly = declared('server').filter(
      (d) =>
        !d.startsWith('@agent-messaging-bridge/') &&
        !declared('client').includes(d) &&
        !declared('conformance').includes(d),
    );
    expect(serverOnly).to.include.members(['knex', 'koa', 'sqlite3', 'pg', 'ioredis', 'pino']);
    for (const key of ['client', 'conformance'] as const)
      expect(
        declared(key).filter((d) => serverOnly.includes(d)),
        key,
      ).to.deep.equal([]);
  });
});
