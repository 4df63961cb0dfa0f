// `npm run gen`: spec/ -> generated/. `npm run gen:check`: fail, naming the files, if generated/ is stale.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadSpecs } from './gen/load.js';
import { generate } from './gen/generate.js';
import { differences, writeFiles } from './gen/emit.js';
import { docsStaleness } from './docs-digest.js';

const OUT_DIR = resolve(import.meta.dirname, '../generated');

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
  const started = performance.now();
  const files = await generate(await loadSpecs());
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (!values.check) {
    writeFiles(OUT_DIR, files);
    console.log(`generated/: ${files.size} files written in ${seconds} s`);
    return 0;
  }
  const stale = differences(OUT_DIR, files);
  const docs = docsStaleness();
  if (docs) console.error(`${docs}; run \`npm run docs\` and commit.`);
  if (stale.length === 0 && docs) return 1;
  if (stale.length === 0) {
    console.log(`generated/ matches spec/ (${files.size} files, ${seconds} s)`);
    return 0;
  }
  console.error(
    `generated/ is stale; run \`npm run gen\` and commit. Files:\n${stale.map((s) => `  ${s}`).join('\n')}`,
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
