// The real `bridge serve` command (`node bin/bridge.js serve`) as a child process for a test: a free port picked
// first (PORT=0 would not tell us the port), /healthz polled until it answers, stdout/stderr kept for failure
// messages, and every process a test started killed (SIGKILL) by `stopBridgeProcesses()` in its afterEach, with the
// processes below it (`npm start` runs the bridge as its child).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { httpJson } from './http.js';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { validators, type AgentCreated, type AppCreated, type Organization } from '../../generated/index.js';
import { CONFIG_VARIABLES } from '../../src/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every configuration variable of src/config.ts, blanked (empty means unset) so the parent's environment cannot leak in. */
const BLANK_CONFIG: Record<string, string> = Object.fromEntries(CONFIG_VARIABLES.map((k) => [k, '']));

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface BridgeProcess {
  child: ChildProcess;
  port: number;
  /** `http://127.0.0.1:port` */
  url: string;
  /** Resolves when the process has exited, with its code or signal. */
  exited: Promise<Exit>;
  /** The processes below the child once it answered (with `npm start`: the bridge itself), killed with it. */
  below: number[];
  readonly running: boolean;
  stdout(): string;
  stderr(): string;
  /** A raw HTTP call, Bearer `token` (the admin token unless null); the body is parsed and checked like bridge.http. */
  http(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string | null; schema?: keyof typeof validators },
  ): Promise<{ status: number; body: any }>;
}

const children = new Set<BridgeProcess>();

/** A TCP port nothing listens on right now: taken from the OS, then released. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `node bin/bridge.js serve` with `env` on top of a blank configuration (HOST=127.0.0.1 and a free PORT unless
 * given) and waits until GET /healthz answers 200.
 */
export async function startBridgeProcess(
  env: Record<string, string>,
  options: {
    adminToken?: string;
    readyTimeoutMs?: number;
    /** `ulimit -n` of the process (through sh) */
    openFilesLimit?: number;
    /** Start it as a user does, `npm start` (the child is then npm, the bridge below it). */
    npmStart?: boolean;
    /** In a process group of its own (led by the child), so a test can signal the group as a terminal's Ctrl-C does. */
    processGroup?: boolean;
  } = {},
): Promise<BridgeProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const url = `http://127.0.0.1:${port}`;
  const [command, args] = options.npmStart
    ? ['npm', ['start']]
    : options.openFilesLimit
      ? ['/bin/sh', ['-c', `ulimit -n ${options.openFilesLimit} && exec "$0" bin/bridge.js serve`, process.execPath]]
      : [process.execPath, ['bin/bridge.js', 'serve']];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...BLANK_CONFIG, HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.processGroup ?? false,
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const adminToken = options.adminToken ?? env.ADMIN_TOKEN;

  const proc: BridgeProcess = {
    child,
    port,
    url,
    exited,
    below: [],
    get running() {
      return child.exitCode === null && child.signalCode === null;
    },
    stdout: () => out,
    stderr: () => err,
    http: (method, path, { token = adminToken ?? null, ...rest } = {}) =>
      httpJson(url, method, path, { token, ...rest }),
  };
  children.add(proc);

  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
  for (;;) {
    if (!proc.running) {
      const { code, signal } = await exited;
      throw new Error(
        `bridge serve exited (code ${code}, signal ${signal}) before /healthz answered; stderr: ${err}\nstdout: ${out.slice(0, 2000)}`,
      );
    }
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) {
        proc.below = descendants(child.pid!);
        return proc;
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`bridge serve did not answer /healthz on ${url} in time; stderr: ${err}`);
    await sleep(50);
  }
}

/** Kills (SIGKILL) every process started by startBridgeProcess that is still running, and waits for each to exit. */
export async function stopBridgeProcesses(): Promise<void> {
  const all = [...children];
  children.clear();
  await Promise.all(
    all.map(async (proc) => {
      if (proc.running) proc.child.kill('SIGKILL');
      await proc.exited;
      for (const pid of proc.below.filter(alive)) process.kill(pid, 'SIGKILL'); // an orphan a failed test left
    }),
  );
}

/** Every process below `pid` (children, their children, ...), from `ps`, at this moment. */
export function descendants(pid: number): number[] {
  const table = execFileSync('ps', ['-A', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  for (let parents = [pid]; parents.length;) {
    parents = table.filter(([, ppid]) => parents.includes(ppid)).map(([child]) => child);
    found.push(...parents);
  }
  return found;
}

/** Whether a process with this pid exists (a zombie counts: nobody has collected it). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** An organization with one app and one agent, provisioned through the admin API of a running process. */
export async function provisionPair(
  proc: BridgeProcess,
): Promise<{ org: Organization; app: AppCreated; agent: AgentCreated }> {
  const created = async (path: string, body: object, schema: keyof typeof validators) => {
    const res = await proc.http('POST', path, { body, schema });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const org: Organization = await created('/admin/v1/organizations', { name: 'Process Org' }, 'Organization');
  const app: AppCreated = await created(
    `/admin/v1/organizations/${org.org_id}/apps`,
    { name: 'Process App' },
    'AppCreated',
  );
  const agent: AgentCreated = await created(
    `/admin/v1/organizations/${org.org_id}/agents`,
    { name: 'Process Agent' },
    'AgentCreated',
  );
  return { org, app, agent };
}

/** Every event of the event log, newest first, read through GET /admin/v1/events paging with `before`. */
export async function allEvents(proc: BridgeProcess): Promise<any[]> {
  const events: any[] = [];
  let before: string | null = null;
  do {
    const query: string = `/admin/v1/events?limit=500${before ? `&before=${before}` : ''}`;
    const res = await proc.http('GET', query, { schema: 'EventLog' });
    if (res.status !== 200) throw new Error(`GET ${query}: ${res.status} ${JSON.stringify(res.body)}`);
    events.push(...res.body.events);
    before = res.body.next_before;
  } while (before);
  return events;
}
