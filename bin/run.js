// Loads an entry point of this package: inside the repository its TypeScript source, through tsx (no build step to
// forget); installed from the package, which ships no sources, its compiled JavaScript in dist/.
import { existsSync } from 'node:fs';

export async function load(entry) {
  const source = new URL(`../${entry}.ts`, import.meta.url);
  if (!existsSync(source)) return import(new URL(`../dist/${entry}.js`, import.meta.url).href);
  const { register } = await import('tsx/esm/api');
  register();
  return import(source.href);
}
