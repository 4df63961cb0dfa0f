// Stages each package in build/packages/<key>/ from the repository (after `tsc -p tsconfig.build.json`): copies its
// entries, resolves every import of its compiled modules (inside the package: a relative path that exists; into
// another package: that package's name and export; anything else: a declared dependency or a Node.js built-in),
// rewrites the relative links of its Markdown files to where their targets are in the package, and writes its
// package.json from its manifest with the one version of the repository and the versions the lockfile installs.
// Anything it cannot place is an error: a package is what its users get, so it must be exact.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { COMMON, PACKAGES, type PackageContents, type PackageKey } from './contents.js';
import { exportedAs, isBuiltin, packageOf, rewriteSpecifiers, specifiersOf } from './imports.js';

export const ROOT = join(import.meta.dirname, '../..');
export const STAGE_DIR = join(ROOT, 'build/packages');

interface Manifest {
  name: string;
  exports: Record<string, string | { types?: string; default?: string }>;
  dependencies: string[];
  peerDependencies?: string[];
  [field: string]: unknown;
}

/** A file of a package: where it came from in the repository, where it is in the package. */
interface Placed {
  key: PackageKey;
  source: string;
  target: string;
  compiled: boolean;
}

const rootManifest = () => JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, any>;
export const manifestOf = (p: PackageContents): Manifest =>
  JSON.parse(readFileSync(join(ROOT, p.dir, 'manifest.json'), 'utf8')) as Manifest;

function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .map((name) => join(path, name))
    .filter((file) => statSync(file).isFile());
}

/** Every file of every package, by its path in the repository (posix, from the root). */
function placeAll(): Map<string, Placed> {
  const placed = new Map<string, Placed>();
  for (const p of PACKAGES) {
    for (const entry of [...p.entries, ...COMMON]) {
      for (const file of filesUnder(join(ROOT, entry.from))) {
        const inside = relative(join(ROOT, entry.from), file).split('\\').join('/');
        if (entry.except?.some((dir) => inside === dir || inside.startsWith(`${dir}/`))) continue;
        if (entry.compiled && !/\.(d\.ts|js)$/.test(file)) continue;
        const source = relative(ROOT, file).split('\\').join('/');
        const target = inside ? posix.join(entry.to, inside) : entry.to;
        const key = `${p.key}:${source}`; // COMMON files go into every package
        placed.set(key, { key: p.key, source, target, compiled: entry.compiled === true });
      }
    }
  }
  return placed;
}

/** Where a compiled file of the repository is, in which package (one owner per compiled file). */
function compiledOwners(placed: Map<string, Placed>): Map<string, Placed> {
  const owners = new Map<string, Placed>();
  for (const file of placed.values()) {
    if (!file.compiled) continue;
    const other = owners.get(file.source);
    if (other)
      throw new Error(
        `${file.source} is in two packages (${other.key}, ${file.key}): give each compiled folder one owner`,
      );
    owners.set(file.source, file);
  }
  return owners;
}

function relativeSpecifier(fromFile: string, toFile: string): string {
  const path = posix.relative(posix.dirname(fromFile), toFile);
  return path.startsWith('.') ? path : `./${path}`;
}

/** A compiled module's code with its imports resolved for the package it is in. */
function resolveImports(
  file: Placed,
  code: string,
  owners: Map<string, Placed>,
  manifests: Map<PackageKey, Manifest>,
  problems: string[],
): string {
  const manifest = manifests.get(file.key)!;
  const declared = new Set([...manifest.dependencies, ...(manifest.peerDependencies ?? [])]);
  return rewriteSpecifiers(code, (specifier) => {
    if (!specifier.startsWith('.')) {
      if (!isBuiltin(specifier) && !declared.has(packageOf(specifier)))
        problems.push(`${file.source} imports ${specifier}, which ${manifest.name} does not depend on`);
      return undefined;
    }
    const targetSource = posix.normalize(posix.join(posix.dirname(file.source), specifier));
    const candidates = [targetSource, targetSource.replace(/\.js$/, '.d.ts')];
    const target = candidates.map((c) => owners.get(c)).find(Boolean);
    if (!target) {
      problems.push(`${file.source} imports ${specifier} (${targetSource}), which no package holds`);
      return undefined;
    }
    if (target.key === file.key) return relativeSpecifier(file.target, target.target.replace(/\.d\.ts$/, '.js'));
    const other = manifests.get(target.key)!;
    const subpath = exportedAs(other.exports, target.target.replace(/\.d\.ts$/, '.js'));
    if (subpath === undefined)
      problems.push(`${file.source} imports ${targetSource}, which ${other.name} does not export`);
    if (!declared.has(other.name))
      problems.push(`${file.source} imports ${other.name}, which ${manifest.name} does not depend on`);
    return `${other.name}${subpath ?? ''}`;
  });
}

const LINK = /\]\((?!https?:|mailto:|#)([^)\s]+)\)/g;

/** A Markdown file with each relative link pointing where its target is in the package (or a problem). */
function resolveLinks(file: Placed, text: string, inPackage: Map<string, string>, problems: string[]): string {
  return text.replace(LINK, (whole, link: string) => {
    const [path, anchor] = link.split('#') as [string, string | undefined];
    const source = posix.normalize(posix.join(posix.dirname(file.source), path));
    const target = inPackage.get(source);
    if (!target) {
      problems.push(`${file.source} links ${link}, which is not in the package`);
      return whole;
    }
    return `](${relativeSpecifier(file.target, target).replace(/^\.\//, '')}${anchor !== undefined ? `#${anchor}` : ''})`;
  });
}

/** Versions of the dependencies, from the root package.json: exact for what is installed here, as CI tests it. */
function versionsOf(manifest: Manifest, version: string): Record<string, Record<string, string>> {
  const root = rootManifest();
  const installed = { ...root.devDependencies, ...root.dependencies } as Record<string, string>;
  const of = (name: string, peer: boolean): string => {
    if (name.startsWith('@agent-messaging-bridge/')) return version;
    const v = installed[name];
    if (!v) throw new Error(`${manifest.name} depends on ${name}, which the root package.json does not list`);
    return peer ? `>=${v.split('.')[0]}` : v;
  };
  const deps = Object.fromEntries(manifest.dependencies.map((n) => [n, of(n, false)]));
  const peers = Object.fromEntries((manifest.peerDependencies ?? []).map((n) => [n, of(n, true)]));
  return { dependencies: deps, ...(manifest.peerDependencies ? { peerDependencies: peers } : {}) };
}

function packageJson(p: PackageContents, manifest: Manifest, files: string[]): string {
  const root = rootManifest();
  const { name, description, keywords, ...rest } = manifest;
  const { dependencies: _d, peerDependencies: _p, ...fields } = rest;
  const json = {
    name,
    version: root.version as string,
    description,
    keywords,
    license: root.license,
    type: 'module',
    engines: root.engines,
    ...fields,
    files: [...new Set(files.map((f) => f.split('/')[0]!))]
      .filter((f) => !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(f))
      .sort(),
    ...versionsOf(manifest, root.version),
    publishConfig: { access: 'public' },
  };
  return `${JSON.stringify(json, null, 2)}\n`;
}

/** Stages every package; returns the problems found (empty: all exact). */
export function stageAll(): { dirs: Map<PackageKey, string>; problems: string[] } {
  rmSync(STAGE_DIR, { recursive: true, force: true });
  const placed = placeAll();
  const owners = compiledOwners(placed);
  const manifests = new Map(PACKAGES.map((p) => [p.key, manifestOf(p)]));
  const problems: string[] = [];
  const dirs = new Map<PackageKey, string>();
  for (const p of PACKAGES) {
    const dir = join(STAGE_DIR, p.key);
    const files = [...placed.values()].filter((f) => f.key === p.key);
    const inPackage = new Map(files.map((f) => [f.source, f.target]));
    const used = new Set<string>();
    for (const file of files) {
      const out = join(dir, file.target);
      mkdirSync(dirname(out), { recursive: true });
      if (file.compiled) {
        const code = resolveImports(file, readFileSync(join(ROOT, file.source), 'utf8'), owners, manifests, problems);
        for (const s of specifiersOf(code)) if (!s.startsWith('.') && !isBuiltin(s)) used.add(packageOf(s));
        writeFileSync(out, code);
      } else if (file.source.endsWith('.md')) {
        writeFileSync(out, resolveLinks(file, readFileSync(join(ROOT, file.source), 'utf8'), inPackage, problems));
      } else {
        copyFileSync(join(ROOT, file.source), out);
      }
    }
    const manifest = manifests.get(p.key)!;
    for (const dep of manifest.dependencies) {
      if (!dep.startsWith('@agent-messaging-bridge/') && !used.has(dep))
        problems.push(`${manifest.name} depends on ${dep}, which none of its modules imports`);
    }
    writeFileSync(
      join(dir, 'package.json'),
      packageJson(
        p,
        manifest,
        files.map((f) => f.target),
      ),
    );
    dirs.set(p.key, dir);
  }
  return { dirs, problems };
}
