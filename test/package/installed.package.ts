// The packages as users get them: `npm run packages` stages and packs the four tarballs, and each audience's install
// is made in an empty project of its own (`npm init -y`, no path back to this repository): the server from its
// package serves a bridge; the client alone (installed with --ignore-scripts) runs an app and an agent against it,
// from .mjs files, the connector's bin with a YAML configuration, and the README's TypeScript type-checked; the
// conformance runner alone (--ignore-scripts too) judges that bridge (server role) and an agent of the client
// package (client role). What the client and the runner weigh is measured and bounded. Slow (the server's install
// builds sqlite3): `npm run test:package`, which CI runs on every Node.js version it supports.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { VERSION } from '../../generated/index.js';
import { eventually } from '../helpers/eventually.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { TestClient } from '../helpers/ws-client.js';
import { mb, project, quiet, snippet, start, weigh, type Project } from './projects.js';

const REPO = join(import.meta.dirname, '../..');
const ADMIN_TOKEN = 'outside-admin-token-0123456789';
const TARBALLS = join(REPO, 'build/tarballs');
const CLIENT_README = readFileSync(join(REPO, 'packages/client/README.md'), 'utf8');

/** The install's weight within its bounds (printed, for the README's figures), with no script and none of `absent`. */
function expectLight(p: Project, label: string, maxPackages: number, maxMb: number, absent: string[]): void {
  const w = weigh(p);
  console.log(
    `      ${label}: ${w.packages.length} packages (${w.packages.join(', ')}), ${mb(w.bytes)} of files, ${mb(w.diskBytes)} on disk`,
  );
  expect(w.withInstallScripts).to.deep.equal([]);
  expect(w.packages.length).to.be.at.most(maxPackages);
  expect(w.bytes).to.be.at.most(maxMb * 1024 * 1024);
  expect(w.packages).to.not.include.members(['knex', 'koa', 'sqlite3', 'pg', 'ioredis', 'tsx', ...absent]);
}

describe('the packages, installed outside this repository', function () {
  this.timeout(900_000);
  let dir: string;
  let base: string;
  let ws: string;
  let server: Project;
  let collector: OtlpReceiver;
  const children: ChildProcess[] = [];
  const tarball = (key: string) =>
    join(
      TARBALLS,
      readdirSync(TARBALLS).find((f) => f.startsWith(`agent-messaging-bridge-${key}-`))!,
    );

  async function admin(path: string, body: object): Promise<any> {
    const res = await fetch(`${base}/admin/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, path).to.equal(201);
    return res.json();
  }

  /** A new organization with an app and an agent (tokens included). */
  async function registrations(name: string) {
    const org = await admin('/organizations', { name });
    return {
      app: await admin(`/organizations/${org.org_id}/apps`, { name: `${name} App` }),
      agent: await admin(`/organizations/${org.org_id}/agents`, { name: `${name} Agent` }),
    };
  }

  before(async function () {
    execFileSync('npx', ['tsx', 'tools/packages.ts', '--publish-dry-run'], { ...quiet, cwd: REPO });
    dir = mkdtempSync(join(tmpdir(), 'bridge-packages-'));
    server = project(join(dir, 'server'), ['protocol', 'client', 'conformance', 'server'].map(tarball));
    collector = await startOtlpReceiver();
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const env = {
      PORT: String(port),
      ADMIN_TOKEN,
      DATABASE_URL: `sqlite:${join(dir, 'bridge.sqlite')}`,
      BRIDGE_TEST_CLOCK: '1',
      LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
    };
    await start(children, server.dir, server.bin('bridge'), ['serve'], env, /bridge listening/);
    base = `http://127.0.0.1:${port}`;
    ws = `ws://127.0.0.1:${port}/v1`;
  });

  after(async function () {
    for (const c of children) c.kill('SIGTERM');
    await collector?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('the server package', function () {
    it('runs `bridge serve`, which says its version and serves /docs/, /docs/http/ and the dashboard page', async function () {
      expect(server.run(server.bin('bridge'), ['--version']).trim()).to.equal(VERSION);
      expect(((await (await fetch(`${base}/healthz`)).json()) as { version: string }).version).to.equal(VERSION);
      expect(await (await fetch(`${base}/docs/`)).text()).to.include('Agent Messaging Bridge');
      expect((await fetch(`${base}/docs/js/app.js`)).status).to.equal(200);
      expect(await (await fetch(`${base}/docs/http/`)).text()).to.include('Agent Messaging Bridge — HTTP API');
      for (const file of ['redoc.standalone.js', 'init.js', 'openapi.json'])
        expect((await fetch(`${base}/docs/http/${file}`)).status, file).to.equal(200);
      const dashboard = await fetch(`${base}/dashboard`);
      expect(dashboard.status).to.equal(200);
      expect(await dashboard.text()).to.match(/<html/i);
    });
    it("traces an event to the OTLP collector named by OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the SDK loaded from the package's dependencies)", async function () {
      const { app, agent } = await registrations('Traced');
      const agentClient = await TestClient.connect(base, 'agent', agent.token);
      const appClient = await TestClient.connect(base, 'app', app.token);
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: {} });
      const { event_id } = await appClient.expect('accepted');
      await agentClient.expect('event');
      agentClient.send({ type: 'reply', event_id, content: 'ok', done: true });
      await appClient.expect('reply');
      const names = () =>
        collector.spans.filter((s) => s.attributes['bridge.event_id'] === event_id).map((s) => s.name);
      await eventually('the spans', names, (n) => n.length === 2);
      expect(names().sort()).to.deep.equal(['bridge.deliver', 'bridge.event']);
      appClient.close();
      agentClient.close();
    });
  });

  describe('the client package alone', function () {
    let client: Project;
    before(function () {
      client = project(join(dir, 'client'), [tarball('protocol'), tarball('client')], { ignoreScripts: true });
    });

    it('installs within 15 packages and 5 MB, none with an install script', function () {
      expectLight(client, 'client', 15, 5, ['pino', 'commander']);
    });

    it('runs bridge-connector with a YAML configuration and a .mjs handler, and a .mjs app gets the reply', async function () {
      const { app, agent } = await registrations('Client Package');
      client.write(
        'agents.yaml',
        `connection:\n  url: ${ws}/ws/agent\nagents:\n  - agent_id: ${agent.agent_id}\n    token: \${AGENT_TOKEN}\n`,
      );
      client.write(
        'handler.mjs',
        `export default function (event, ctx) { ctx.stream('outside: ' + event.payload.text); ctx.reply(''); }\n`,
      );
      expect(client.run(client.bin('bridge-connector'), ['--version']).trim()).to.equal(VERSION);
      await start(
        children,
        client.dir,
        client.bin('bridge-connector'),
        ['--config', 'agents.yaml', '--handler', 'handler.mjs'],
        { AGENT_TOKEN: agent.token },
        /"connected"/,
      );
      client.write(
        'app.mjs',
        `
        import { connectApp } from '@agent-messaging-bridge/client';
        const client = await connectApp({ url: process.env.URL, token: process.env.APP_TOKEN });
        console.log(await client.send({ agentId: process.env.AGENT_ID, threadId: 't1', payload: { text: 'hello' } }).text());
        await client.close();
      `,
      );
      expect(
        client.run('node', ['app.mjs'], { URL: ws, APP_TOKEN: app.token, AGENT_ID: agent.agent_id }).trim(),
      ).to.equal('outside: hello');
    });

    it('runs a TypeScript handler without tsx where Node.js strips types, and says what to install where it does not', async function () {
      const { app, agent } = await registrations('TypeScript Handler');
      client.write(
        'ts-agents.yaml',
        `connection:\n  url: ${ws}/ws/agent\nagents:\n  - agent_id: ${agent.agent_id}\n    token: \${AGENT_TOKEN}\n`,
      );
      client.write(
        'handler.mts',
        `export default function (event: { payload: unknown }, ctx: { reply(text: string): void }): void { ctx.reply('typed'); }\n`,
      );
      const args = ['--config', 'ts-agents.yaml', '--handler', 'handler.mts'];
      if ((process.features as { typescript?: unknown }).typescript) {
        await start(
          children,
          client.dir,
          client.bin('bridge-connector'),
          args,
          { AGENT_TOKEN: agent.token },
          /"connected"/,
        );
        expect(
          client.run('node', ['app.mjs'], { URL: ws, APP_TOKEN: app.token, AGENT_ID: agent.agent_id }).trim(),
        ).to.equal('typed');
        return;
      }
      let stderr = '';
      try {
        client.run(client.bin('bridge-connector'), args, { AGENT_TOKEN: agent.token });
      } catch (err) {
        stderr = String((err as { stderr?: string }).stderr);
      }
      expect(stderr).to.include('install tsx (npm install tsx) or use Node.js 22.18 or later');
    });

    it('imports every export of the client and the protocol from a plain .mjs file', function () {
      client.write(
        'imports.mjs',
        `
        import { connectApp, Connector, BridgeError, StreamGapError } from '@agent-messaging-bridge/client';
        import { connectApp as direct, StreamGapError as gap } from '@agent-messaging-bridge/client/app-client';
        import { loadHandler } from '@agent-messaging-bridge/client/connector';
        import { LIMITS, VERSION, validateEventMessage } from '@agent-messaging-bridge/protocol';
        import { createRequire } from 'node:module';
        const schemas = createRequire(import.meta.url)('@agent-messaging-bridge/protocol/schemas.json');
        console.log([connectApp === direct, typeof Connector, typeof BridgeError, StreamGapError === gap && StreamGapError.prototype instanceof BridgeError, typeof loadHandler, LIMITS.payloadMaxBytes,
          validateEventMessage({ type: 'event', agent_id: 'a', thread_id: 't', payload: {} }), VERSION, typeof schemas.definitions.EventMessage].join(' '));
      `,
      );
      expect(client.run('node', ['imports.mjs']).trim()).to.equal(
        `true function function true function 64000 true ${VERSION} object`,
      );
    });

    it("type-checks the README's TypeScript in this CommonJS project (as a .mts file), and a wrong call fails", function () {
      client.run('npm', [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        'typescript@5.9.3',
        '@types/node@20.19.9',
      ]);
      const options = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--types', 'node'];
      client.write('app.mts', snippet(CLIENT_README, 'ts', 'connectApp('));
      client.write('errors.mts', snippet(CLIENT_README, 'ts', 'StreamGapError'));
      client.write('handler.mts', snippet(CLIENT_README, 'ts', 'AgentHandler'));
      client.run(client.bin('tsc'), [...options, 'app.mts', 'errors.mts', 'handler.mts']);
      client.write(
        'bad.mts',
        `import { connectApp } from '@agent-messaging-bridge/client';\nawait connectApp({ url: 1 });\n`,
      );
      let errors = '';
      try {
        client.run(client.bin('tsc'), [...options, 'bad.mts']);
      } catch (err) {
        errors = String((err as { stdout?: string }).stdout); // tsc reports on stdout
      }
      expect(errors).to.match(/bad\.mts.*error TS2322/);
    });
  });

  describe('the conformance package alone', function () {
    let runner: Project;
    before(function () {
      runner = project(join(dir, 'conformance'), [tarball('protocol'), tarball('conformance')], {
        ignoreScripts: true,
      });
    });

    it('installs within 25 packages and 10 MB, none with an install script', function () {
      expectLight(runner, 'conformance', 25, 10, ['@agent-messaging-bridge/server']);
    });

    it('judges the bridge of the server package (server role), its report naming the suite and requirement set', function () {
      expect(runner.run(runner.bin('bridge-conformance'), ['--version']).trim()).to.equal(VERSION);
      const report = join(dir, 'server-role.json');
      runner.run(runner.bin('bridge-conformance'), [
        'server',
        '--url',
        ws,
        '--admin-token',
        ADMIN_TOKEN,
        '--grep',
        '^(flow-stream-and-reply|auth-bad-token)$',
        '--report-json',
        report,
      ]);
      const json = JSON.parse(readFileSync(report, 'utf8'));
      expect(json.overall.conforms).to.equal(true);
      expect(JSON.stringify(json)).to.include(VERSION);
    });

    it('runs the robustness mode against that bridge, its cases generated from the protocol package', function () {
      const report = join(dir, 'robustness.json');
      const out = runner.run(runner.bin('bridge-conformance'), [
        'robustness',
        '--url',
        ws,
        '--admin-token',
        ADMIN_TOKEN,
        '--seed',
        '7',
        '--cases',
        '20',
        '--report-json',
        report,
      ]);
      expect(out).to.match(/verdict: conforms/);
      expect(JSON.parse(readFileSync(report, 'utf8')).scenarios.length).to.be.greaterThan(15);
    });

    it('judges an agent written on the client package (client role)', function () {
      const clientDir = join(dir, 'client');
      runner.write(
        'agent.mjs',
        `
        import { Connector, resolveConnectorConfig } from '@agent-messaging-bridge/client';
        const token = process.env.BRIDGE_TOKEN;
        const config = resolveConnectorConfig({ connection: { url: process.env.BRIDGE_URL + '/ws/agent' }, agents: [{ agent_id: token.split('_')[1], token }] }, { source: 'agent.mjs' });
        const connector = new Connector(config, { handler: (event, ctx) => { ctx.stream('You said: ' + event.payload.text); ctx.reply(''); } });
        process.once('SIGTERM', () => connector.close().then(() => process.exit(0)));
        await connector.start();
      `,
      );
      // The agent runs in the client's project (where the client package is), the suite in its own.
      execFileSync('cp', [join(runner.dir, 'agent.mjs'), clientDir]);
      const out = runner.run(runner.bin('bridge-conformance'), [
        'client',
        '--role',
        'agent',
        '--command',
        `node ${join(clientDir, 'agent.mjs')}`,
        '--grep',
        '^agent-(streams-and-replies|answers-every-event)$',
      ]);
      expect(out).to.match(/verdict: conforms/);
    });
  });
});
