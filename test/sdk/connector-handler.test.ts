// Loading a handler module: default export or `handle`, TypeScript or JavaScript, a path from the working directory.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import echo from '../../examples/echo-agent.js';
import { HandlerLoadError, loadHandler } from '../../src/sdk/connector/handler.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('connector handler modules', function () {
  let dir: string;
  before(async function () {
    dir = await mkdtemp(join(tmpdir(), 'connector-handler-'));
  });
  after(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads a default export, resolving the path from the working directory', async function () {
    const handler = await loadHandler('examples/echo-agent.ts', ROOT);
    expect(handler.name).to.equal(echo.name).and.equal('echo');
  });

  it('loads `handle`, from TypeScript or JavaScript, ESM or CommonJS, inside or outside a module package', async function () {
    // The temporary directory has no package.json: a .ts file there is CommonJS to Node.
    const files: Record<string, string> = {
      'named.ts': 'export function handle(): string { return "named.ts"; }\n',
      'default.ts': 'export default function (): string { return "default.ts"; }\n',
      'default.mts': 'export default (): string => "default.mts";\n',
      'named.mjs': 'export function handle() { return "named.mjs"; }\n',
      'common.cjs': 'module.exports = function () { return "common.cjs"; };\n',
      'common-handle.cjs': 'exports.handle = function () { return "common-handle.cjs"; };\n',
    };
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    for (const name of Object.keys(files)) {
      const handler = (await loadHandler(join(dir, name))) as unknown as () => string;
      expect(handler(), name).to.equal(name);
    }
  });

  it('says what is wrong with a module that cannot serve', async function () {
    await writeFile(join(dir, 'none.ts'), 'export const notAHandler = 1;\n');
    await writeFile(join(dir, 'broken.mjs'), 'throw new Error("broken at load");\n');
    const failure = async (path: string) => {
      try {
        await loadHandler(path, dir);
      } catch (err) {
        expect(err).to.be.instanceOf(HandlerLoadError);
        return (err as Error).message;
      }
      throw new Error(`${path} loaded`);
    };
    expect(await failure('none.ts')).to.include('exports neither a default function nor a function named handle');
    expect(await failure('broken.mjs')).to.include('broken at load');
    expect(await failure('missing.ts')).to.include('handler module missing.ts not found');
  });
});
