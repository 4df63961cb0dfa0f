// The import specifiers of compiled modules (.js and .d.ts): read, and rewritten where an import crosses from one
// package into another (a relative path in the repository becomes the other package's name and export).
import { builtinModules } from 'node:module';

/** `from '…'`, `import('…')`, `import '…'` and `require('…')`, with either quote. */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(['"])([^'"\n]+)\2/g;

export function specifiersOf(code: string): string[] {
  return [...code.matchAll(SPECIFIER)].map((m) => m[3]!);
}

/** `code` with every specifier replaced by `map(specifier)` (undefined keeps it). */
export function rewriteSpecifiers(code: string, map: (specifier: string) => string | undefined): string {
  return code.replace(SPECIFIER, (whole, lead: string, quote: string, specifier: string) => {
    const next = map(specifier);
    return next === undefined ? whole : `${lead}${quote}${next}${quote}`;
  });
}

const BUILTINS = new Set(builtinModules);

export function isBuiltin(specifier: string): boolean {
  return specifier.startsWith('node:') || BUILTINS.has(specifier.split('/')[0]!);
}

/** The package a bare specifier names: `ws`, `@koa/router`, `ajv-formats/dist/formats.js` -> `ajv-formats`. */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

type ExportTarget = string | { types?: string; default?: string };

/**
 * The subpath of `exports` under which `file` (a path in the package, `dist/shared/clock.js`) is public, as a
 * specifier suffix (`''` for `.`, `/shared/clock` for `./shared/*`), or undefined when no export reaches it.
 */
export function exportedAs(exports: Record<string, ExportTarget>, file: string): string | undefined {
  for (const [key, value] of Object.entries(exports)) {
    const target = (typeof value === 'string' ? value : value.default)?.replace(/^\.\//, '');
    if (!target) continue;
    if (!target.includes('*')) {
      if (target === file) return key.slice(1);
      continue;
    }
    const [before, after] = target.split('*') as [string, string];
    if (file.startsWith(before) && file.endsWith(after) && file.length >= before.length + after.length) {
      return key.slice(1).replace('*', file.slice(before.length, file.length - after.length));
    }
  }
  return undefined;
}
