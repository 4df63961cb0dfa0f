// The spec, loaded once per test run through the generator's own loader.
import { loadSpecs, type SpecSource } from '../../tools/gen/load.js';
import { collectDefinitions, type Definitions } from '../../tools/gen/schemas.js';

export interface LoadedSpec {
  asyncapi: SpecSource;
  openapi: SpecSource;
  defs: Definitions;
}

let loaded: Promise<LoadedSpec> | undefined;

export function spec(): Promise<LoadedSpec> {
  loaded ??= loadSpecs().then(({ asyncapi, openapi }) => ({ asyncapi, openapi, defs: collectDefinitions(asyncapi, openapi) }));
  return loaded;
}
