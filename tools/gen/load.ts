// Loads the three spec documents, validates each with its own parser, and returns their raw trees.
// Code generation reads the raw YAML (with its $refs intact) so models keep the names the spec gives them;
// the parsers are only the judges of validity, and their errors fail the build.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Parser, fromFile, DiagnosticSeverity } from '@asyncapi/parser';
import SwaggerParser from '@apidevtools/swagger-parser';

export const SPEC_DIR = resolve(import.meta.dirname, '../../spec');
export const ASYNCAPI_FILE = 'asyncapi.yaml';
export const OPENAPI_FILE = 'openapi.yaml';
export const CONFORMANCE_FILE = 'conformance.yaml';

/** A JSON Schema node of the documents, as read. */
export type Schema = Record<string, any>;

export interface SpecSource {
  file: string;
  text: string;
  tree: Record<string, any>;
}

/** The three documents of spec/: the WebSocket protocol, its HTTP parts, and the conformance suite's interfaces. */
export interface Specs {
  asyncapi: SpecSource;
  openapi: SpecSource;
  conformance: SpecSource;
}

export interface Diagnostic {
  severity: 'error' | 'warning' | 'information' | 'hint';
  where: string;
  message: string;
}

export class SpecError extends Error {
  constructor(
    file: string,
    readonly diagnostics: Diagnostic[],
  ) {
    super(`${file} is invalid:\n${diagnostics.map((d) => `  ${d.severity} at ${d.where}: ${d.message}`).join('\n')}`);
  }
}

function readSource(file: string): SpecSource {
  const text = readFileSync(resolve(SPEC_DIR, file), 'utf8');
  return { file, text, tree: parseYaml(text) };
}

const SEVERITY: Record<number, Diagnostic['severity']> = {
  [DiagnosticSeverity.Error]: 'error',
  [DiagnosticSeverity.Warning]: 'warning',
  [DiagnosticSeverity.Information]: 'information',
  [DiagnosticSeverity.Hint]: 'hint',
};

export async function asyncApiDiagnostics(): Promise<Diagnostic[]> {
  const { diagnostics } = await fromFile(new Parser(), resolve(SPEC_DIR, ASYNCAPI_FILE)).parse({ applyTraits: false });
  return diagnostics.map((d) => ({
    severity: SEVERITY[d.severity] ?? 'error',
    where: `${d.path.join('.') || '(root)'} (line ${d.range.start.line + 1})`,
    message: d.message,
  }));
}

export async function openApiDiagnostics(): Promise<Diagnostic[]> {
  try {
    // validate() dereferences in place: give it a path so the $refs into asyncapi.yaml resolve from spec/.
    await SwaggerParser.validate(resolve(SPEC_DIR, OPENAPI_FILE));
    return [];
  } catch (err) {
    return [{ severity: 'error', where: OPENAPI_FILE, message: (err as Error).message }];
  }
}

/** conformance.yaml has no parser of its own: plain JSON Schemas under components.schemas, compiled by Ajv in strict mode. */
function conformanceShape(source: SpecSource): Diagnostic[] {
  const schemas = source.tree?.components?.schemas;
  return schemas && typeof schemas === 'object'
    ? []
    : [{ severity: 'error', where: CONFORMANCE_FILE, message: 'needs components.schemas' }];
}

export async function loadSpecs(): Promise<Specs> {
  const [asyncErrors, openErrors] = await Promise.all([asyncApiDiagnostics(), openApiDiagnostics()]);
  const fatal = asyncErrors.filter((d) => d.severity === 'error');
  if (fatal.length) throw new SpecError(ASYNCAPI_FILE, asyncErrors);
  if (openErrors.length) throw new SpecError(OPENAPI_FILE, openErrors);
  const conformance = readSource(CONFORMANCE_FILE);
  const conformanceErrors = conformanceShape(conformance);
  if (conformanceErrors.length) throw new SpecError(CONFORMANCE_FILE, conformanceErrors);
  return { asyncapi: readSource(ASYNCAPI_FILE), openapi: readSource(OPENAPI_FILE), conformance };
}
