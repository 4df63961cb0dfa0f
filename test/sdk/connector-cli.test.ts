// `bridge-connector --config FILE --handler MODULE`, run for real (node bin/bridge-connector.js) against a test
// bridge: notifications as JSON lines on stdout, the echo example answering an app, a clean exit on SIGTERM after
// the drain (C8), --version and usage errors, and start-up errors that name what is wrong.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { VERSION } from '../../generated/index.js';
import { HELP } from '../../src/sdk/connector/cli-args.js';
import { startTestBridge, type TestBridge } from '../helpers/bridge.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** The stdout JSON lines so far. */
  lines(): any[];
}

const running: Run[] = [];

/** A test bridge with an app and an agent, and a configuration file whose token is read from `T`. */
async function bridgeAndConfig(dir: string): Promise<{
  bridge: TestBridge;
  app: { app_id: string; token: string };
  agent: { agent_id: string; token: string };
  config: string;
}> {
  const bridge = await startTestBridge();
  const org = await bridge.org();
  const app = await bridge.app(org.org_id);
  const agent = await bridge.agent(org.org_id);
  const config = join(dir, 'connector.yaml');
  await writeFile(
    config,
    `connection: {url: "${bridge.url.replace(/^http/, 'ws')}/v1/ws/agent"}\nagents: [{agent_id: ${agent.agent_id}, token: "\${T}"}]\n`,
  );
  return { bridge, app, agent, config };
}

function connectorCommand(args: string[], env: NodeJS.ProcessEnv): Run {
  const child = spawn(process.execPath, ['bin/bridge-connector.js', ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const run: Run = {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    lines: () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
  };
  running.push(run);
  return run;
}

async function until(check: () => boolean, what: string, run: Run): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (check()) return;
    if (run.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}; stdout: ${run.stdout()}\nstderr: ${run.stderr()}`);
}

describe('the bridge-connector command', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(async function () {
    dir = await mkdtemp(join(tmpdir(), 'connector-cli-'));
  });
  afterEach(async function () {
    for (const run of running.splice(0)) {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
      await run.exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the echo example against a bridge, prints notifications as JSON lines, and exits 0 on SIGTERM', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const app = await bridge.app(org.org_id);
    const agent = await bridge.agent(org.org_id);
    const config = join(dir, 'connector.yaml');
    await writeFile(
      config,
      [
        'connection:',
        `  url: ${bridge.url.replace(/^http/, 'ws')}/v1/ws/agent`,
        'agents:',
        `  - agent_id: ${agent.agent_id}`,
        '    token: ${ECHO_AGENT_TOKEN}',
        '',
      ].join('\n'),
    );
    const run = connectorCommand(['--config', config, '--handler', 'examples/echo-agent.ts'], {
      ECHO_AGENT_TOKEN: agent.token,
    });
    await until(() => run.lines().some((l) => l.type === 'connected'), 'connected', run);
    await bridge.untilAgentOnline(agent.agent_id, true);

    const appClient = await bridge.connectApp(app.token);
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'cli', payload: { text: 'hi there' } });
    const { event_id } = await appClient.expect('accepted');
    const tokens = [];
    for (let i = 0; i < 4; i++) tokens.push((await appClient.expect('token')).token);
    expect(tokens).to.deep.equal(['You ', 'said: ', 'hi ', 'there']);
    expect((await appClient.expect('reply')).reply).to.equal('You said: hi there');
    await until(() => run.lines().some((l) => l.type === 'event-replied'), 'event-replied', run);

    run.child.kill('SIGTERM');
    expect(await run.exited, run.stderr()).to.equal(0);
    const lines = run.lines();
    expect(lines.map((l) => l.type)).to.deep.equal([
      'connected',
      'event-received',
      'event-replied',
      'disconnected',
      'closed',
      'stopped',
    ]);
    expect(lines.at(-1)).to.include({ type: 'stopped' }).and.deep.include({ cutShort: [] });
    expect(lines[1]).to.include({ agentId: agent.agent_id, eventId: event_id, sessionKey: `svc:${app.app_id}:cli` });
    expect(lines[2]).to.include({ agentId: agent.agent_id, eventId: event_id, tokenCount: 4 });
    for (const line of lines) expect(Date.parse(line.time)).to.be.a('number').and.not.NaN;
  });

  it('on SIGTERM lets the event in flight finish, answers a new one at once with AGENT_ERROR, then exits 0', async function () {
    const { bridge, app, agent, config } = await bridgeAndConfig(dir);
    const release = join(dir, 'release');
    const handler = join(dir, 'slow.mjs');
    await writeFile(
      handler,
      [
        "import { existsSync } from 'node:fs';",
        'export default async function (event, ctx) {',
        "  ctx.token('working ');",
        '  while (!existsSync(process.env.RELEASE_FILE)) await new Promise((resolve) => setTimeout(resolve, 10));',
        "  ctx.reply('finished');",
        '}',
        '',
      ].join('\n'),
    );
    const run = connectorCommand(['--config', config, '--handler', handler], {
      T: agent.token,
      RELEASE_FILE: release,
      LOG_LEVEL: 'info',
    });
    await until(() => run.lines().some((l) => l.type === 'connected'), 'connected', run);
    await bridge.untilAgentOnline(agent.agent_id, true);
    const appClient = await bridge.connectApp(app.token);
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'drain', payload: {} });
    const first = (await appClient.expect('accepted')).event_id;
    expect((await appClient.expect('token')).token).to.equal('working ');

    run.child.kill('SIGTERM');
    await until(
      () => run.stderr().includes('stopping: letting 1 event(s) in flight finish, for 20000 ms at most'),
      'the drain',
      run,
    );
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'drain', payload: {} });
    const second = (await appClient.expect('accepted')).event_id;
    expect(await appClient.expect('error')).to.deep.include({
      event_id: second,
      code: 'AGENT_ERROR',
      error:
        'The agent connector is stopping and did not start this event; it may be sent again once the agent is back.',
    });

    await writeFile(release, '');
    expect(await appClient.expect('reply')).to.include({ event_id: first, reply: 'finished' });
    expect(await run.exited, run.stderr()).to.equal(0);
    expect(run.lines().at(-1)).to.deep.include({ type: 'stopped', cutShort: [] });
  });

  it('ends with AGENT_ERROR what is still in flight when --drain-timeout has passed, and prints which events it cut short', async function () {
    const { bridge, app, agent, config } = await bridgeAndConfig(dir);
    const handler = join(dir, 'stuck.mjs');
    await writeFile(handler, 'export default () => new Promise(() => {});\n');
    const run = connectorCommand(['--config', config, '--handler', handler, '--drain-timeout', '50'], {
      T: agent.token,
    });
    await until(() => run.lines().some((l) => l.type === 'connected'), 'connected', run);
    await bridge.untilAgentOnline(agent.agent_id, true);
    const appClient = await bridge.connectApp(app.token);
    appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 'cut', payload: {} });
    const eventId = (await appClient.expect('accepted')).event_id;
    await until(() => run.lines().some((l) => l.type === 'event-received'), 'event-received', run);

    run.child.kill('SIGTERM');
    expect(await appClient.expect('error')).to.deep.include({
      event_id: eventId,
      code: 'AGENT_ERROR',
      error: 'The agent connector is shutting down.',
    });
    expect(await run.exited, run.stderr()).to.equal(0);
    expect(run.lines().at(-1)).to.deep.include({ type: 'stopped', cutShort: [{ agentId: agent.agent_id, eventId }] });
    const warning = run
      .stderr()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.msg.startsWith('stop ended'));
    expect(warning).to.deep.include({
      msg: `stop ended 1 event(s) still in flight with AGENT_ERROR: ${eventId} (${agent.agent_id})`,
    });
  });

  it('prints its version (--version, -v) and its help (--help); an unknown flag is an error, exit 1, with the help', async function () {
    for (const flag of ['--version', '-v']) {
      const run = connectorCommand([flag], {});
      expect(await run.exited).to.equal(0);
      expect(run.stdout()).to.equal(`${VERSION}\n`);
    }
    const help = connectorCommand(['--help'], {});
    expect(await help.exited).to.equal(0);
    expect(help.stdout()).to.equal(HELP);
    const wrong = connectorCommand(['--config', 'x.yaml', '--handler', 'h.ts', '--drain-timout', '5'], {});
    expect(await wrong.exited).to.equal(1);
    expect(wrong.stderr()).to.equal(`error: unknown option '--drain-timout'\n\n${HELP}`);
    expect(wrong.stdout()).to.equal('');
  });

  it('serves its health endpoint on 127.0.0.1 only unless told otherwise, and logs the address it listens on', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const agent = await bridge.agent(org.org_id);
    const config = join(dir, 'connector.yaml');
    await writeFile(
      config,
      `connection: {url: "${bridge.url.replace(/^http/, 'ws')}/v1/ws/agent"}\nagents: [{agent_id: ${agent.agent_id}, token: "\${T}"}]\nhealth: {port: 0}\n`,
    );
    const run = connectorCommand(['--config', config, '--handler', 'examples/echo-agent.ts'], {
      T: agent.token,
      LOG_LEVEL: 'info',
    });
    const running = () =>
      run
        .stderr()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === 'connector running');
    await until(() => running() !== undefined, 'connector running', run);
    const url = new URL(running().health);
    expect(url.hostname).to.equal('127.0.0.1');
    expect((await fetch(url)).status).to.equal(200);
    // Every other address of this machine is refused (a machine with loopback only has none to try).
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && !a.internal && a.family === 'IPv4')
      .map((a) => a!.address);
    const reachable = async (address: string, port: string) =>
      fetch(`http://${address}:${port}/health`).then(
        (r) => r.status === 200,
        () => false,
      );
    for (const address of others) expect(await reachable(address, url.port), `reachable on ${address}`).to.equal(false);
    run.child.kill('SIGTERM');
    expect(await run.exited, run.stderr()).to.equal(0);

    const everywhere = connectorCommand(
      ['--config', config, '--handler', 'examples/echo-agent.ts', '--health-host', '0.0.0.0'],
      { T: agent.token, LOG_LEVEL: 'info' },
    );
    const runningEverywhere = () =>
      everywhere
        .stderr()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === 'connector running');
    await until(() => runningEverywhere() !== undefined, 'connector running on 0.0.0.0', everywhere);
    const everywhereUrl = new URL(runningEverywhere().health);
    expect(everywhereUrl.hostname).to.equal('0.0.0.0');
    for (const address of others)
      expect(await reachable(address, everywhereUrl.port), `reachable on ${address}`).to.equal(true);
  });

  it('fails at start-up, exit 1, with one line naming the health endpoint when its port is taken', async function () {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const config = join(dir, 'connector.yaml');
      await writeFile(
        config,
        `connection: {url: "ws://127.0.0.1:1/v1/ws/agent"}\nagents: [{agent_id: tutor-7k2m, token: rla_tutor-7k2m_Zx8kQ2mV7pL4nR9sT1wY6bC3dF5gH0jK2aE4iO8uQ1z}]\nhealth: {port: ${port}}\n`,
      );
      const run = connectorCommand(['--config', config, '--handler', 'examples/echo-agent.ts'], {});
      expect(await run.exited).to.equal(1);
      expect(run.stderr().trimEnd().split('\n')).to.deep.equal([
        `bridge-connector: the health endpoint cannot listen on 127.0.0.1:${port} (health.port, health.host): the port is already in use by another process (EADDRINUSE); stop it or choose another port`,
      ]);
    } finally {
      taken.close();
    }
  });

  it('fails at start-up, exit 1, with one line on a LOG_LEVEL it does not know', async function () {
    const run = connectorCommand(['--config', 'nowhere.yaml', '--handler', 'examples/echo-agent.ts'], {
      LOG_LEVEL: 'verbose',
    });
    expect(await run.exited).to.equal(1);
    expect(run.stderr()).to.equal(
      'bridge-connector: LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent; got verbose\n',
    );
  });

  it('fails at start-up, exit 1, naming a missing variable and the config path', async function () {
    const config = join(dir, 'connector.json');
    await writeFile(
      config,
      JSON.stringify({
        connection: { url: 'ws://127.0.0.1:1/v1/ws/agent' },
        agents: [{ agent_id: 'tutor-7k2m', token: '${NO_SUCH_TOKEN_VAR}' }],
      }),
    );
    const env = { NO_SUCH_TOKEN_VAR: undefined } as unknown as NodeJS.ProcessEnv;
    const run = connectorCommand(['--config', config, '--handler', 'examples/echo-agent.ts'], env);
    expect(await run.exited).to.equal(1);
    expect(run.stderr()).to.include('NO_SUCH_TOKEN_VAR').and.include('agents[0].token').and.include(config);
    expect(run.stdout()).to.equal('');
  });

  it('fails at start-up, exit 1, when the bridge refuses the token', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org();
    const agent = await bridge.agent(org.org_id);
    const config = join(dir, 'connector.yaml');
    await writeFile(
      config,
      `connection: {url: "${bridge.url.replace(/^http/, 'ws')}/v1/ws/agent"}\nagents: [{agent_id: ${agent.agent_id}, token: "\${T}"}]\n`,
    );
    const run = connectorCommand(['--config', config, '--handler', 'examples/echo-agent.ts'], {
      T: `rla_${agent.agent_id}_${'x'.repeat(40)}`,
    });
    expect(await run.exited).to.equal(1);
    expect(run.stderr()).to.include(`bridge-connector: could not connect ${agent.agent_id}: UNAUTHORIZED: `);
    expect(run.lines().map((l) => l.type)).to.deep.equal(['event-error', 'closed']);
  });

  it('loads a TypeScript handler from outside the project, and fails at start-up, exit 1, on one that exports no handler', async function () {
    const config = join(dir, 'connector.yaml');
    await writeFile(
      config,
      'connection: {url: "ws://127.0.0.1:1/v1/ws/agent"}\nagents: [{agent_id: tutor-7k2m, token: rla_tutor-7k2m_Zx8kQ2mV7pL4nR9sT1wY6bC3dF5gH0jK2aE4iO8uQ1z}]\n',
    );
    const good = join(dir, 'good.ts');
    await writeFile(good, 'export default function (): void {}\n');
    // Nothing listens on port 1: the connector keeps trying (and stays up meanwhile) until told to stop.
    const waiting = connectorCommand(['--config', config, '--handler', good], {});
    await until(
      () => waiting.lines().filter((l) => l.type === 'reconnecting').length >= 2,
      'two reconnect attempts',
      waiting,
    );
    waiting.child.kill('SIGTERM');
    expect(await waiting.exited, waiting.stderr()).to.equal(0);

    const handler = join(dir, 'nothing.ts');
    await writeFile(handler, 'export const notAHandler = 1;\n');
    const run = connectorCommand(['--config', config, '--handler', handler], {});
    expect(await run.exited).to.equal(1);
    expect(run.stderr()).to.include('exports neither a default function nor a function named handle');
  });
});
