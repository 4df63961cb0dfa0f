// The files the compiled package reads at run time beside its modules, copied next to them in dist/: tsc emits only
// JavaScript and declarations. Each is read relative to its module (import.meta.url), as in the sources.
import { cpSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const ASSETS = [
  'generated/validators.cjs', // the Ajv standalone code that generated/validators.ts requires
  'src/dashboard/assets', // served by the dashboard
  'conformance/requirements.yaml',
  'conformance/fixtures-layout.yaml',
  'conformance/scenarios',
  'conformance/examples',
  'docs', // the protocol's HTML documentation, served at /docs
];

for (const path of ASSETS) cpSync(join(ROOT, path), join(ROOT, 'dist', path), { recursive: true });
console.log(`dist/: ${ASSETS.length} asset paths copied`);
