// `npm run docs`: spec/asyncapi.yaml -> docs/ (HTML, by the AsyncAPI HTML template), served by the bridge at /docs.
// The template and its generator weigh about 400 MB, so they live in tools/docs/ with their own lockfile instead of
// the project's devDependencies: installed there on first use (needs the npm registry once), offline afterwards.
// docs/ is committed, so a bridge from a fresh clone or the installed package serves /docs with no build step.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DOCS_DIR, DIGEST_FILE, SPEC_FILE, specDigest } from './docs-digest.js';

const TOOLS = resolve(import.meta.dirname, 'docs');
const TEMPLATE = join(TOOLS, 'node_modules/@asyncapi/html-template');

function installTools(): void {
  if (existsSync(TEMPLATE)) return;
  console.log('tools/docs/: installing the AsyncAPI generator and HTML template (once)…');
  // Scripts off: the only one is puppeteer's Chrome download, which the template needs for PDF output alone.
  execFileSync('npm', ['ci', '--prefix', TOOLS, '--ignore-scripts', '--no-audit', '--no-fund'], {
    stdio: 'inherit',
    env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: 'true' },
  });
}

interface GeneratorClass {
  new (template: string, out: string, options: object): { generateFromFile(file: string): Promise<void> };
}

async function render(out: string): Promise<void> {
  const Generator = createRequire(join(TOOLS, 'package.json'))('@asyncapi/generator') as GeneratorClass;
  // Separate js/ and css/ files (not one 3 MB page): the page's own HTML is then small enough to read in a diff.
  const generator = new Generator(TEMPLATE, out, { forceWrite: true, templateParams: { singleFile: 'false' } });
  await generator.generateFromFile(SPEC_FILE);
}

async function main(): Promise<void> {
  const started = performance.now();
  installTools();
  const out = mkdtempSync(join(tmpdir(), 'bridge-docs-'));
  await render(out);
  writeFileSync(join(out, DIGEST_FILE), `${specDigest()}\n`);
  chmodSync(out, 0o755); // mkdtemp makes it private
  rmSync(DOCS_DIR, { recursive: true, force: true });
  try {
    renameSync(out, DOCS_DIR);
  } catch {
    cpSync(out, DOCS_DIR, { recursive: true }); // another file system than the temporary directory
    rmSync(out, { recursive: true, force: true });
  }
  console.log(`docs/: rendered from spec/asyncapi.yaml in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
