// The spec, loaded once per test run through the generator's own loader.
import { loadSpecs, type Specs } from '../../tools/gen/load.js';
import { collectDefinitions, type Definitions } from '../../tools/gen/schemas.js';

export interface LoadedSpec extends Specs {
  defs: Definitions;
}

let loaded: Promise<LoadedSpec> | undefined;

export function spec(): Promise<LoadedSpec> {
  loaded ??= loadSpecs().then((specs) => ({ ...specs, defs: collectDefinitions(specs) }));
  return loaded;
}
