// Empty projects outside the repository, each with some of the packages' tarballs installed as a user would
// (from the npm cache where it can: CI reaches only the npm registry), and what an install weighs.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const quiet = { stdio: 'pipe' as const, encoding: 'utf8' as const, maxBuffer: 64 * 1024 * 1024 };

export interface Project {
  dir: string;
  /** Runs a command in the project; returns its stdout (throws with its stderr on a non-zero exit). */
  run(file: string, args: string[], env?: NodeJS.ProcessEnv): string;
  /** A command of node_modules/.bin. */
  bin(name: string): string;
  write(file: string, text: string): void;
}

/** `npm init -y` in a new folder (CommonJS, as npm makes it), then `npm install` of `specs`. */
export function project(dir: string, specs: string[], options: { ignoreScripts?: boolean } = {}): Project {
  mkdirSync(dir, { recursive: true });
  const run = (file: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    execFileSync(file, args, { ...quiet, cwd: dir, env: { ...process.env, ...env } });
  run('npm', ['init', '-y']);
  run('npm', [
    'install',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    ...(options.ignoreScripts ? ['--ignore-scripts'] : []),
    ...specs,
  ]);
  return {
    dir,
    run,
    bin: (name) => join(dir, 'node_modules/.bin', name),
    write: (file, text) => writeFileSync(join(dir, file), text),
  };
}

export interface Weight {
  /** Installed packages (every folder of node_modules with a package.json and a name). */
  packages: string[];
  /** The sum of the installed files' sizes. */
  bytes: number;
  /** What the disk holds for them (`du -sk`: blocks, so small files count 4 KB). */
  diskBytes: number;
  /** Packages that declare an install script (preinstall, install, postinstall). */
  withInstallScripts: string[];
}

function walk(dir: string, visit: (path: string, isDir: boolean) => void): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    visit(path, entry.isDirectory());
    if (entry.isDirectory() && !entry.isSymbolicLink()) walk(path, visit);
  }
}

export function weigh(p: Project): Weight {
  const modules = join(p.dir, 'node_modules');
  const packages: string[] = [];
  const withInstallScripts: string[] = [];
  let bytes = 0;
  walk(modules, (path, isDir) => {
    if (!isDir) {
      bytes += statSync(path).size;
      if (path.endsWith('/package.json') && /node_modules\/(@[^/]+\/)?[^/@.][^/]*\/package\.json$/.test(path)) {
        const manifest = JSON.parse(readFileSync(path, 'utf8')) as { name?: string; scripts?: Record<string, string> };
        if (!manifest.name) return;
        packages.push(manifest.name);
        if (['preinstall', 'install', 'postinstall'].some((s) => manifest.scripts?.[s]))
          withInstallScripts.push(manifest.name);
      }
    }
  });
  const diskBytes = Number(execFileSync('du', ['-sk', modules], quiet).split('\t')[0]) * 1024;
  return { packages: packages.sort(), bytes, diskBytes, withInstallScripts };
}

export const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(2)} MB`;

/** Starts a long-running command of a project; resolves with it once its output matches `ready`. */
export function start(
  children: ChildProcess[],
  cwd: string,
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<ChildProcess> {
  const child = spawn(file, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${file}: not ready within 30 s:\n${out}`)), 30_000);
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}:\n${out}`)));
  });
}

/** The first fenced block of `lang` in a Markdown file whose text contains `marker`. */
export function snippet(markdown: string, lang: string, marker: string): string {
  const blocks = [...markdown.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
  const found = blocks.find((b) => b.includes(marker));
  if (!found) throw new Error(`no \`\`\`${lang} block with ${marker}`);
  return found;
}
