// The spec documents as plain trees, read synchronously so tests can declare one case per example.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';

const SPEC_DIR = resolve(import.meta.dirname, '../../spec');

export const asyncapi = parse(readFileSync(resolve(SPEC_DIR, 'asyncapi.yaml'), 'utf8')) as Record<string, any>;
export const openapi = parse(readFileSync(resolve(SPEC_DIR, 'openapi.yaml'), 'utf8')) as Record<string, any>;

/** `#/components/schemas/X` or `./asyncapi.yaml#/components/schemas/X` -> `X`. */
export function schemaName(ref: unknown): string | undefined {
  return typeof ref === 'string' ? /#\/components\/schemas\/(\w+)$/.exec(ref)?.[1] : undefined;
}

/** Resolves a local `#/...` reference inside one document. */
export function resolveLocal(tree: Record<string, any>, node: any): any {
  let current = node;
  while (current && typeof current.$ref === 'string' && current.$ref.startsWith('#/')) {
    current = current.$ref
      .slice(2)
      .split('/')
      .reduce((n: any, part: string) => n?.[part], tree);
  }
  return current;
}

/** Every node of a tree with its path, depth first. */
export function* walk(node: unknown, path: string[] = []): Generator<[Record<string, any>, string[]]> {
  if (!node || typeof node !== 'object') return;
  if (!Array.isArray(node)) yield [node as Record<string, any>, path];
  for (const [key, child] of Object.entries(node)) yield* walk(child, [...path, key]);
}
