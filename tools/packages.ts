// `npm run packages`: compiles the sources (tsconfig.build.json), stages the four packages from them
// (tools/packages/stage.ts) and packs each into build/tarballs/. `-- --publish-dry-run` also runs
// `npm publish --dry-run` in each. Fails, naming each problem, when a package is not exact.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, stageAll } from './packages/stage.js';

export const TARBALL_DIR = join(ROOT, 'build/tarballs');

interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
}

function main(): number {
  const { values } = parseArgs({
    options: {
      'publish-dry-run': { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
    },
  });
  if (!values['no-build']) {
    rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  }
  const { dirs, problems } = stageAll();
  if (problems.length) {
    console.error(`the packages are not exact:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    return 1;
  }
  rmSync(TARBALL_DIR, { recursive: true, force: true });
  mkdirSync(TARBALL_DIR, { recursive: true });
  for (const [key, dir] of dirs) {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', TARBALL_DIR], {
        cwd: dir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as PackResult[];
    const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
    console.log(
      `${key.padEnd(12)} ${packed!.filename.padEnd(52)} ${String(packed!.entryCount).padStart(4)} files  ${kb(packed!.size).padStart(7)} packed  ${kb(packed!.unpackedSize).padStart(7)} unpacked`,
    );
    if (values['publish-dry-run']) execFileSync('npm', ['publish', '--dry-run'], { cwd: dir, stdio: 'pipe' }); // throws with npm's output on a refusal
  }
  console.log(`build/tarballs/: ${readdirSync(TARBALL_DIR).length} tarballs`);
  return 0;
}

process.exitCode = main();
