// A Python process of the package's examples or tests for the python lane: the interpreter scripts/python.sh picks
// (one that can import websockets), its output kept and waited on line by line, and every process a test started
// stopped after it (SIGTERM, so the examples' own stop runs; SIGKILL if they do not exit).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let interpreter: string | undefined;
/** The Python that can run the package; fails the test with the script's one line when there is none. */
export function python(): string {
  interpreter ??= execFileSync('bash', ['scripts/python.sh'], { cwd: ROOT, encoding: 'utf8' }).trim();
  return interpreter;
}

export interface PythonProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first line matching `pattern` (waiting for it), rejects after `timeoutMs` or at exit. */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();

/** `o.interpreter` (default: python()) runs `args` in `o.cwd` (default: the repository). */
export function startPython(
  args: string[],
  env: Record<string, string>,
  o: { interpreter?: string; cwd?: string } = {},
): PythonProcess {
  const child = spawn(o.interpreter ?? python(), args, {
    cwd: o.cwd ?? ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      for (const w of waiters) w();
      resolve(code);
    }),
  );
  return {
    child,
    output: () => out,
    exited,
    line: (pattern, timeoutMs = 15_000) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => done(new Error(`no line matching ${pattern} in ${timeoutMs} ms:\n${out}`)),
          timeoutMs,
        );
        const check = () => {
          const found = out.split('\n').find((l) => pattern.test(l));
          if (found !== undefined) done(undefined, found);
          else if (child.exitCode !== null) done(new Error(`exited (${child.exitCode}) before ${pattern}:\n${out}`));
        };
        const done = (err?: Error, found?: string) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (err) reject(err);
          else resolve(found!);
        };
        waiters.add(check);
        check();
      }),
  };
}

/** Stops every process a test started: SIGTERM, then SIGKILL after 3 s. */
export async function stopPythonProcesses(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          const kill = setTimeout(() => child.kill('SIGKILL'), 3_000);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}
