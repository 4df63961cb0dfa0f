// The package as a user gets it: `npm pack` makes the tarball, which is installed into an empty temporary project
// (no path back to this repository), and there the SDK is imported from JavaScript and type-checked from
// TypeScript, the installed `bridge` serves an app and an agent, `bridge-connector` runs a YAML configuration with a
// JavaScript handler, and `bridge-conformance` runs both roles. Slow (the install builds sqlite3): `npm run
// test:package`, which CI runs; not part of `npm test`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';

const REPO = join(import.meta.dirname, '../..');
const ADMIN_TOKEN = 'outside-admin-token-0123456789';
const quiet = { stdio: 'pipe' as const, encoding: 'utf8' as const, maxBuffer: 64 * 1024 * 1024 };

describe('the installed package, outside this repository', function () {
  this.timeout(900_000);
  let dir: string;
  let project: string;
  let bridge: ChildProcess;
  let base: string;
  const children: ChildProcess[] = [];

  /** Runs a command in the project; returns its stdout (throws with its stderr on a non-zero exit). */
  const run = (file: string, args: string[], env: NodeJS.ProcessEnv = {}) => execFileSync(file, args, { ...quiet, cwd: project, env: { ...process.env, ...env } });
  const bin = (name: string) => join(project, 'node_modules/.bin', name);

  async function admin(path: string, body: object): Promise<any> {
    const res = await fetch(`${base}/admin/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status, path).to.equal(201);
    return res.json();
  }

  /** Starts a long-running command of the project; resolves with the first stdout line matching `ready`. */
  function start(file: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<ChildProcess> {
    const child = spawn(file, args, { cwd: project, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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

  before(async function () {
    dir = mkdtempSync(join(tmpdir(), 'bridge-package-'));
    execFileSync('npm', ['pack', '--pack-destination', dir], { ...quiet, cwd: REPO });
    const tarball = join(dir, readdirSync(dir).find((f) => f.endsWith('.tgz'))!);
    project = join(dir, 'project');
    execFileSync('mkdir', [project]);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'outside', version: '1.0.0', type: 'module', private: true }));
    // From the npm cache where it can: CI reaches only the npm registry, and this is what a user's install does.
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, 'typescript@5.9.3', '@types/node@20.19.9']);
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    bridge = await start(bin('bridge'), ['serve'], { PORT: String(port), ADMIN_TOKEN, DATABASE_URL: `sqlite:${join(dir, 'bridge.sqlite')}`, BRIDGE_TEST_CLOCK: '1', LOG_LEVEL: 'warn' }, /bridge listening/);
    base = `http://127.0.0.1:${port}`;
  });

  after(function () {
    for (const c of children) c.kill('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('imports the SDK, the protocol and the conformance API by their subpaths from a plain .mjs file', function () {
    writeFileSync(join(project, 'imports.mjs'), `
      import { connectApp, Connector, BridgeError, StreamGapError } from 'agent-messaging-bridge';
      import { connectApp as direct, StreamGapError as gap } from 'agent-messaging-bridge/app-client';
      import { loadHandler } from 'agent-messaging-bridge/connector';
      import { LIMITS, validateEventMessage } from 'agent-messaging-bridge/protocol';
      import { server, client, CLIENT_SCENARIOS } from 'agent-messaging-bridge/conformance';
      console.log([connectApp === direct, typeof Connector, typeof BridgeError, StreamGapError === gap && StreamGapError.prototype instanceof BridgeError, typeof loadHandler, LIMITS.payloadMaxBytes,
        validateEventMessage({ type: 'event', agent_id: 'a', thread_id: 't', payload: {} }), typeof server, typeof client, CLIENT_SCENARIOS.length > 0].join(' '));
    `);
    expect(run('node', ['imports.mjs']).trim()).to.equal('true function function true function 64000 true function function true');
  });

  it('type-checks a TypeScript file that uses the SDK and the protocol types with tsc', function () {
    writeFileSync(join(project, 'typed.ts'), `
      import { connectApp, type AgentHandler, type AppClient } from 'agent-messaging-bridge';
      import type { EventMessage } from 'agent-messaging-bridge/protocol';
      const handler: AgentHandler = (event, ctx) => ctx.reply('echo ' + JSON.stringify(event.payload));
      const message: EventMessage = { type: 'event', agent_id: 'a', thread_id: 't', payload: {} };
      export async function use(url: string, token: string): Promise<AppClient> { void handler; void message; return connectApp({ url, token }); }
    `);
    writeFileSync(join(project, 'bad.ts'), `import { connectApp } from 'agent-messaging-bridge';\nconnectApp({ url: 1 });\n`);
    const tsconfig = (files: string[]) => JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'] }, files });
    writeFileSync(join(project, 'tsconfig.json'), tsconfig(['typed.ts']));
    run(bin('tsc'), ['-p', 'tsconfig.json']);
    writeFileSync(join(project, 'tsconfig.json'), tsconfig(['bad.ts'])); // the types are real: a wrong call fails
    let errors = '';
    try {
      run(bin('tsc'), ['-p', 'tsconfig.json']);
    } catch (err) {
      errors = String((err as { stdout?: string }).stdout); // tsc reports on stdout
    }
    expect(errors).to.match(/bad\.ts.*error TS2322/);
  });

  it('serves the protocol documentation at /docs/ from the installed bridge, with the files the page loads', async function () {
    const page = await (await fetch(`${base}/docs/`)).text();
    expect(page).to.include('Agent Messaging Bridge');
    expect((await fetch(`${base}/docs/js/app.js`)).status).to.equal(200);
  });

  it('runs bridge-connector with a YAML configuration and a JavaScript handler, and an app gets the reply through the installed bridge', async function () {
    const org = await admin('/organizations', { name: 'Outside' });
    const app = await admin(`/organizations/${org.org_id}/apps`, { name: 'Outside App' });
    const agent = await admin(`/organizations/${org.org_id}/agents`, { name: 'Outside Agent' });
    writeFileSync(join(project, 'agents.yaml'), `connection:\n  url: ${base.replace('http', 'ws')}/v1/ws/agent\nagents:\n  - agent_id: ${agent.agent_id}\n    token: \${AGENT_TOKEN}\n`);
    writeFileSync(join(project, 'handler.mjs'), `export default function (event, ctx) { ctx.stream('outside: ' + event.payload.text); ctx.reply(''); }\n`);
    await start(bin('bridge-connector'), ['--config', 'agents.yaml', '--handler', 'handler.mjs'], { AGENT_TOKEN: agent.token }, /"connected"/);
    writeFileSync(join(project, 'app.mjs'), `
      import { connectApp } from 'agent-messaging-bridge';
      const client = await connectApp({ url: process.env.URL, token: process.env.APP_TOKEN });
      console.log(await client.send({ agentId: process.env.AGENT_ID, threadId: 't1', payload: { text: 'hello' } }).text());
      await client.close();
    `);
    expect(run('node', ['app.mjs'], { URL: `${base.replace('http', 'ws')}/v1`, APP_TOKEN: app.token, AGENT_ID: agent.agent_id }).trim()).to.equal('outside: hello');
  });

  it('runs bridge-conformance against the installed bridge (server role) and against a client built on the installed SDK (client role)', function () {
    const report = join(dir, 'server.json');
    run(bin('bridge-conformance'), ['server', '--url', `${base.replace('http', 'ws')}/v1`, '--admin-token', ADMIN_TOKEN, '--grep', '^(flow-stream-and-reply|auth-bad-token)$', '--report-json', report]);
    writeFileSync(join(project, 'agent.mjs'), `
      import { Connector, resolveConnectorConfig } from 'agent-messaging-bridge';
      const token = process.env.BRIDGE_TOKEN;
      const config = resolveConnectorConfig({ connection: { url: process.env.BRIDGE_URL + '/ws/agent' }, agents: [{ agent_id: token.split('_')[1], token }] }, { source: 'agent.mjs' });
      const connector = new Connector(config, { handler: (event, ctx) => { ctx.stream('You said: ' + event.payload.text); ctx.reply(''); } });
      process.once('SIGTERM', () => connector.close().then(() => process.exit(0)));
      await connector.start();
    `);
    const out = run(bin('bridge-conformance'), ['client', '--role', 'agent', '--command', 'node agent.mjs', '--grep', '^agent-(streams-and-replies|answers-every-event)$']);
    expect(out).to.match(/verdict: conforms/);
  });
});
