// What the robustness generator reads of the spec: the generated JSON Schemas (generated/schemas.json, closed and
// `Open…` variants) and the root extension `x-limits` of spec/asyncapi.yaml with each limit's unit and applies_to
// (the generated LIMITS keep only the values). Read once, on first use; the generator itself does no I/O.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { parse } from 'yaml';

/** A JSON Schema node, as far as the generator reads one. */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  required?: string[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  oneOf?: Schema[];
  description?: string;
  examples?: unknown[];
}

export interface LimitSpec {
  value: number;
  unit: string;
  applies_to: string;
  description: string;
}

export interface SpecModel {
  /** schemas.json's definitions, by name. */
  definitions: Record<string, Schema>;
  /** x-limits, by name. */
  limits: Record<string, LimitSpec>;
}

const ROOT = resolve(import.meta.dirname, '..', '..');
let cached: SpecModel | undefined;

/** The spec model of this repository (generated/schemas.json and spec/asyncapi.yaml), read once. */
export function loadSpecModel(root = ROOT): SpecModel {
  if (root === ROOT && cached) return cached;
  const files = specFiles(root);
  const schemas = JSON.parse(readFileSync(files.schemas, 'utf8')) as {
    definitions: Record<string, Schema>;
  };
  const asyncapi = parse(readFileSync(files.asyncapi, 'utf8')) as {
    'x-limits': Record<string, LimitSpec>;
  };
  const model = { definitions: schemas.definitions, limits: asyncapi['x-limits'] };
  if (root === ROOT) cached = model;
  return model;
}

/**
 * Where the two files are: in this repository, under its root; in the installed conformance package, in the protocol
 * package it depends on, which exports both (`./schemas.json`, `./spec/*`).
 */
function specFiles(root: string): { schemas: string; asyncapi: string } {
  const here = { schemas: resolve(root, 'generated/schemas.json'), asyncapi: resolve(root, 'spec/asyncapi.yaml') };
  if (existsSync(here.schemas) && existsSync(here.asyncapi)) return here;
  const require = createRequire(import.meta.url);
  return {
    schemas: require.resolve('@agent-messaging-bridge/protocol/schemas.json'),
    asyncapi: require.resolve('@agent-messaging-bridge/protocol/spec/asyncapi.yaml'),
  };
}

/** The definition a `$ref` (`#/definitions/Name`) names, or the schema itself when it is no reference. */
export function deref(model: SpecModel, schema: Schema): Schema {
  let s = schema;
  for (let i = 0; s.$ref && i < 16; i++) {
    const name = s.$ref.replace('#/definitions/', '');
    const target = model.definitions[name];
    if (!target) throw new Error(`schemas.json: no definition ${name}`);
    s = { ...target, ...(s.description ? { description: s.description } : {}) };
  }
  return s;
}

/** The definition name a property's `$ref` names (OpenEventId), or undefined. */
export const refName = (schema: Schema): string | undefined => schema.$ref?.replace('#/definitions/', '');
