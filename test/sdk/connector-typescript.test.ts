// How bridge-connector loads a TypeScript handler when tsx is optional: with tsx found (next to the connector or from
// the working directory) every kind of .ts file loads; without it, Node's own type stripping does, or the load fails
// with a HandlerLoadError saying what to install. Each case runs in a plain `node` (no tsx hooks of the test run),
// on the connector's modules compiled to JavaScript as a package would ship them.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** Handlers outside any package (no package.json): a `.ts` file there is CommonJS to Node. */
const HANDLERS: Record<string, string> = {
  'typed.ts': 'export default function (): string { const kind: string = "typed.ts"; return kind; }\n',
  'typed.mts': 'export const handle = (): string => "typed.mts";\n',
  'typed.cts': 'module.exports = function (): string { return "typed.cts"; };\n',
};

/** What the child reports for each handler: the handler's answer, or the load error. */
type Outcome = Record<string, string>;

describe('connector TypeScript handlers, tsx optional', function () {
  this.timeout(60_000);
  let dir: string;
  let lib: string;
  let handlers: string;

  before(async function () {
    dir = await mkdtemp(join(tmpdir(), 'connector-ts-'));
    lib = join(dir, 'lib');
    handlers = join(dir, 'handlers');
    await mkdir(lib);
    await mkdir(handlers);
    // Outside the repository, so that nothing resolves the repository's tsx from here.
    await writeFile(join(lib, 'package.json'), '{"type": "module"}\n');
    for (const name of ['typescript-hooks', 'handler']) {
      const source = await readFile(join(ROOT, `src/sdk/connector/${name}.ts`), 'utf8');
      const { outputText } = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      });
      await writeFile(join(lib, `${name}.js`), outputText);
    }
    await writeFile(
      join(lib, 'main.js'),
      [
        "import { registerTypeScriptHooks } from './typescript-hooks.js';",
        "import { loadHandler } from './handler.js';",
        'const loader = await registerTypeScriptHooks(...(process.env.PLACES ? [JSON.parse(process.env.PLACES)] : []));',
        'const outcome = { loader };',
        'for (const file of process.argv.slice(2)) {',
        '  outcome[file] = await loadHandler(file).then((handler) => handler(), (err) => `${err.name}: ${err.message}`);',
        '}',
        'console.log(JSON.stringify(outcome));',
        '',
      ].join('\n'),
    );
    for (const [name, text] of Object.entries(HANDLERS)) await writeFile(join(handlers, name), text);
  });
  after(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  async function load(cwd: string, places?: string[]): Promise<Outcome> {
    const env: NodeJS.ProcessEnv = { ...process.env, ...(places ? { PLACES: JSON.stringify(places) } : {}) };
    delete env.NODE_OPTIONS;
    const { stdout } = await run(
      process.execPath,
      [join(lib, 'main.js'), ...Object.keys(HANDLERS).map((name) => join(handlers, name))],
      { cwd, env },
    );
    return JSON.parse(stdout) as Outcome;
  }

  const answers = (outcome: Outcome) => Object.keys(HANDLERS).map((name) => outcome[join(handlers, name)]);

  it('registers tsx found from the working directory (the connector installed elsewhere), and every kind of .ts file loads', async function () {
    const outcome = await load(ROOT);
    expect(outcome.loader).to.equal('tsx');
    expect(answers(outcome)).to.deep.equal(['typed.ts', 'typed.mts', 'typed.cts']);
  });

  it('registers tsx found next to the connector (the places it is given)', async function () {
    const outcome = await load(handlers, [join(ROOT, 'package.json')]);
    expect(outcome.loader).to.equal('tsx');
    expect(answers(outcome)).to.deep.equal(['typed.ts', 'typed.mts', 'typed.cts']);
  });

  it('without tsx, relies on Node to strip types, or fails with a HandlerLoadError saying to install tsx or a newer Node.js', async function () {
    const outcome = await load(handlers);
    const strips = Boolean((process.features as { typescript?: string | false }).typescript);
    expect(outcome.loader).to.equal(strips ? 'node' : 'none');
    if (strips) {
      expect(answers(outcome)).to.deep.equal(['typed.ts', 'typed.mts', 'typed.cts']);
      return;
    }
    for (const name of Object.keys(HANDLERS)) {
      const file = join(handlers, name);
      expect(outcome[file], name).to.equal(
        `HandlerLoadError: cannot load handler module ${file}: Node.js ${process.version} cannot run TypeScript by itself: install tsx (npm install tsx) or use Node.js 22.18 or later`,
      );
    }
  });
});
