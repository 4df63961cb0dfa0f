// `npm run docs`: spec/asyncapi.yaml -> docs/ (HTML, by the AsyncAPI HTML template) and spec/openapi.yaml ->
// docs/http/ (Redoc's standalone bundle: tools/docs-http.ts), served by the bridge at /docs/ and /docs/http/, each
// page linking the other. The renderers weigh about 480 MB, so they live in tools/docs/ with their own lockfile
// instead of the project's devDependencies: installed there on first use (needs the npm registry once), offline
// afterwards. docs/ is committed, so a bridge from a fresh clone or the installed package serves /docs with no build
// step, and the pages load nothing from anywhere but the bridge.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { ASYNCAPI_FILE, DOCS_DIR, DIGEST_FILE, specDigest } from './docs-digest.js';
import { renderHttpDocs } from './docs-http.js';
import { NAV_CSS, withNavigation } from './docs-nav.js';

const ROOT = resolve(import.meta.dirname, '..');
const TOOLS = resolve(import.meta.dirname, 'docs');
const TEMPLATE = join(TOOLS, 'node_modules/@asyncapi/html-template');
/** Redoc's tree of its own (tools/docs/redoc/package.json says why). */
const REDOC_TOOLS = join(TOOLS, 'redoc');

function install(prefix: string, what: string, flags: string[] = []): void {
  console.log(`${relative(ROOT, prefix)}/: installing ${what} (once)…`);
  execFileSync('npm', ['ci', '--prefix', prefix, '--ignore-scripts', '--no-audit', '--no-fund', ...flags], {
    stdio: 'inherit',
    env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: 'true' },
  });
}

function installTools(): void {
  // Scripts off: the only one is puppeteer's Chrome download, which the template needs for PDF output alone.
  if (!existsSync(TEMPLATE)) install(TOOLS, 'the AsyncAPI generator and HTML template');
  if (!existsSync(join(REDOC_TOOLS, 'node_modules/redoc'))) install(REDOC_TOOLS, 'Redoc', ['--legacy-peer-deps']); // as its lockfile was made
}

interface GeneratorClass {
  new (template: string, out: string, options: object): { generateFromFile(file: string): Promise<void> };
}

async function renderProtocol(out: string): Promise<void> {
  const Generator = createRequire(join(TOOLS, 'package.json'))('@asyncapi/generator') as GeneratorClass;
  // Separate js/ and css/ files (not one 3 MB page): the page's own HTML is then small enough to read in a diff.
  const generator = new Generator(TEMPLATE, out, { forceWrite: true, templateParams: { singleFile: 'false' } });
  await generator.generateFromFile(ASYNCAPI_FILE);
  const index = join(out, 'index.html');
  writeFileSync(index, withNavigation(readFileSync(index, 'utf8')));
  writeFileSync(join(out, 'nav.css'), NAV_CSS);
}

async function main(): Promise<void> {
  const started = performance.now();
  installTools();
  const out = mkdtempSync(join(tmpdir(), 'bridge-docs-'));
  await renderProtocol(out);
  await renderHttpDocs(REDOC_TOOLS, out);
  writeFileSync(join(out, DIGEST_FILE), `${specDigest()}\n`);
  chmodSync(out, 0o755); // mkdtemp makes it private
  rmSync(DOCS_DIR, { recursive: true, force: true });
  try {
    renameSync(out, DOCS_DIR);
  } catch {
    cpSync(out, DOCS_DIR, { recursive: true }); // another file system than the temporary directory
    rmSync(out, { recursive: true, force: true });
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`docs/: rendered from spec/asyncapi.yaml and spec/openapi.yaml in ${seconds} s`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
