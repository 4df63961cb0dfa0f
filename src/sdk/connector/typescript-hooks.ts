// How a TypeScript handler module (.ts, .mts, .cts) gets loaded, for every bin of bridge-connector (the repository's,
// which runs the sources, and the package's, which runs dist/): tsx is an optional peer dependency of the client
// package, so its ESM and CommonJS hooks are registered only when it can be found, next to this package first, then
// from the working directory (a project that has tsx while the connector is installed elsewhere). Without it, Node's
// own type stripping (22.18 / 23.6 and later) runs `.ts` files; with neither, loadHandler says what to install.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What will load a TypeScript handler: tsx's hooks, Node's type stripping, or nothing. */
export type TypeScriptLoader = 'tsx' | 'node' | 'none';

/** This module's own place (the package's node_modules), then the working directory. */
function defaultPlaces(): string[] {
  return [import.meta.url, pathToFileURL(join(process.cwd(), 'package.json')).href];
}

/** tsx's package.json as resolved from the first place that has one. */
function findTsx(places: readonly string[]): string | undefined {
  for (const place of places) {
    try {
      return createRequire(place).resolve('tsx/package.json');
    } catch {
      // not there: try the next place
    }
  }
  return undefined;
}

/**
 * The ESM file of one of tsx's entry points, read from its exports map: `import('tsx/esm/api')` would resolve from
 * this module rather than from where tsx was found, and the CommonJS build of that entry cannot register the ESM hook.
 */
function esmEntry(packageJson: string, subpath: string): string {
  const entry: unknown = JSON.parse(readFileSync(packageJson, 'utf8')).exports?.[subpath];
  const imported = typeof entry === 'object' && entry !== null ? (entry as { import?: unknown }).import : entry;
  const file =
    typeof imported === 'object' && imported !== null ? (imported as { default?: unknown }).default : imported;
  if (typeof file !== 'string')
    throw new Error(`${packageJson} has no ESM entry ${subpath} (tsx 4 or later is needed)`);
  return pathToFileURL(join(dirname(packageJson), file)).href;
}

/** Whether this Node.js runs `.ts` files by itself (type stripping, on by default from 22.18 and 23.6). */
function nodeStripsTypes(): boolean {
  return Boolean((process.features as { typescript?: string | false }).typescript);
}

/**
 * Registers tsx's ESM and CommonJS hooks if tsx is found from one of `places` (file URLs or paths to resolve from;
 * default: this package's place, then the working directory). Both hooks, because a `.ts` file outside a
 * `"type": "module"` package goes through the CommonJS one. Returns what will load TypeScript handlers.
 */
export async function registerTypeScriptHooks(places: readonly string[] = defaultPlaces()): Promise<TypeScriptLoader> {
  const tsx = findTsx(places);
  if (tsx === undefined) return nodeStripsTypes() ? 'node' : 'none';
  const [esm, cjs] = await Promise.all([import(esmEntry(tsx, './esm/api')), import(esmEntry(tsx, './cjs/api'))]);
  esm.register();
  cjs.register();
  return 'tsx';
}
