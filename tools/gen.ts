// `npm run gen`: spec/ -> generated/ and the Python package's python/agent_bridge/_generated/. `npm run gen:check`:
// fail, naming the files, if either is stale.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadSpecs } from './gen/load.js';
import { generate } from './gen/generate.js';
import { collectDefinitions } from './gen/schemas.js';
import { PYTHON_OUT_DIR, pythonFiles } from './gen/python/index.js';
import { differences, writeFiles } from './gen/emit.js';
import { docsStaleness } from './docs-digest.js';

const OUT_DIR = resolve(import.meta.dirname, '../generated');
const PY_DIR = resolve(import.meta.dirname, '..', PYTHON_OUT_DIR);

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
  const started = performance.now();
  const specs = await loadSpecs();
  const files = await generate(specs);
  const python = pythonFiles(specs, collectDefinitions(specs));
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (!values.check) {
    writeFiles(OUT_DIR, files);
    writeFiles(PY_DIR, python);
    console.log(`generated/: ${files.size} files, ${PYTHON_OUT_DIR}/: ${python.size} files written in ${seconds} s`);
    return 0;
  }
  const stale = [
    ...differences(OUT_DIR, files).map((s) => `generated/${s}`),
    ...differences(PY_DIR, python).map((s) => `${PYTHON_OUT_DIR}/${s}`),
  ];
  const docs = docsStaleness();
  if (docs) console.error(`${docs}; run \`npm run docs\` and commit.`);
  if (stale.length === 0 && docs) return 1;
  if (stale.length === 0) {
    console.log(`generated/ and ${PYTHON_OUT_DIR}/ match spec/ (${files.size + python.size} files, ${seconds} s)`);
    return 0;
  }
  console.error(
    `generated code is stale; run \`npm run gen\` and commit. Files:\n${stale.map((s) => `  ${s}`).join('\n')}`,
  );
  return 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
