// The `bridge` command, run for real (`node bin/bridge.js …`) against a test bridge.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ADMIN_TOKEN, startTestBridge, type TestBridge } from '../helpers/bridge.js';
import { startEvent } from '../helpers/events.js';
import { selfSignedCertificate } from '../helpers/tls.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function bridgeCommand(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/bridge.js', ...args],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const admin = (bridge: TestBridge, ...args: string[]) =>
  bridgeCommand(['--url', bridge.url, '--admin-token', ADMIN_TOKEN, ...args]);

function json(run: Run): any {
  expect(run.code, run.stderr).to.equal(0);
  return JSON.parse(run.stdout);
}

/** A port nothing listens on: taken from the OS, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the bridge CLI', function () {
  this.timeout(60_000);

  it('registers an organization, an app and an agent (tokens shown once), lists agents without tokens, and sets and clears an allowlist', async function () {
    const bridge = await startTestBridge();

    const org = json(await admin(bridge, 'orgs', 'create', 'Acme Learning'));
    expect(org).to.include({ name: 'Acme Learning' });
    expect(org.org_id).to.match(/^acme-learning-/);

    const app = json(await admin(bridge, 'apps', 'create', org.org_id, 'Classroom App'));
    expect(app).to.include({ org_id: org.org_id, name: 'Classroom App', active: true });
    expect(app.token).to.match(new RegExp(`^rlk_${app.app_id}_[A-Za-z0-9]{32,}$`));
    await (await bridge.connectApp(app.token)).expectNothingBeforePong();

    const agent = json(
      await admin(
        bridge,
        'agents',
        'create',
        org.org_id,
        'Math Tutor',
        '--description',
        'Explains maths step by step.',
        '--ttl-days',
        '30',
      ),
    );
    expect(agent).to.include({
      org_id: org.org_id,
      name: 'Math Tutor',
      description: 'Explains maths step by step.',
      ttl_days: 30,
      allowlist: null,
    });
    expect(agent.token).to.match(new RegExp(`^rla_${agent.agent_id}_[A-Za-z0-9]{32,}$`));

    const listRun = await admin(bridge, 'agents', 'list', org.org_id);
    const list = json(listRun);
    expect(list.agents.map((a: { agent_id: string }) => a.agent_id)).to.deep.equal([agent.agent_id]);
    expect(list.agents[0]).not.to.have.property('token');
    expect(listRun.stdout).not.to.include(agent.token);

    const set = json(await admin(bridge, 'allowlist', 'set', agent.agent_id, app.app_id));
    expect(set.allowlist).to.deep.equal([app.app_id]);
    const afterSet = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, { schema: 'AgentList' });
    expect(afterSet.body.agents[0].allowlist).to.deep.equal([app.app_id]);

    const cleared = json(await admin(bridge, 'allowlist', 'clear', agent.agent_id));
    expect(cleared.allowlist).to.equal(null);
    const afterClear = await bridge.http('GET', `/admin/v1/organizations/${org.org_id}/agents`, {
      schema: 'AgentList',
    });
    expect(afterClear.body.agents[0].allowlist).to.equal(null);
  });

  it('deletes an organization with its apps and agents, printing the counts, and exits 1 with NOT_FOUND the second time', async function () {
    const bridge = await startTestBridge();
    const { org, app, agent, appClient, agentClient } = await bridge.pair();
    const kept = await bridge.org('Kept Org');

    expect(json(await admin(bridge, 'orgs', 'delete', org.org_id))).to.deep.equal({
      org_id: org.org_id,
      apps: 1,
      agents: 1,
    });
    for (const client of [appClient, agentClient]) {
      expect(await client.waitForClose(1000)).to.deep.equal({ code: 4410, reason: 'TOKEN_REVOKED' });
    }
    expect(json(await admin(bridge, 'orgs', 'list')).organizations).to.deep.equal([kept]);
    expect(bridge.directory.apps.has(app.app_id) || bridge.directory.agents.has(agent.agent_id)).to.equal(false);

    const again = await admin(bridge, 'orgs', 'delete', org.org_id);
    expect(again.code).to.equal(1);
    expect(again.stdout).to.equal('');
    expect(again.stderr)
      .to.match(/^bridge: NOT_FOUND: /)
      .and.include(org.org_id);
  });

  it("lists an organization's connections with their ids and disconnects one (H8), exiting 1 with NOT_FOUND the second time", async function () {
    const bridge = await startTestBridge({ nodeId: 'solo' });
    const { org, agent, appClient, agentClient } = await bridge.pair();
    await appClient.expectNothingBeforePong();

    const live = json(await admin(bridge, 'connections', 'list', org.org_id));
    expect(live.org_id).to.equal(org.org_id);
    const agentConnection = live.agents[0].connection;
    expect(agentConnection).to.include({ node_id: 'solo' });
    expect(agentConnection.connection_id).to.match(/^c-[0-9a-z]{16}$/);
    expect(live.apps[0].connections).to.have.length(1);

    expect(json(await admin(bridge, 'connections', 'disconnect', agentConnection.connection_id))).to.deep.equal({
      connection_id: agentConnection.connection_id,
      node_id: 'solo',
      kind: 'agent',
      id: agent.agent_id,
      org_id: org.org_id,
      connected_at: agentConnection.connected_at,
    });
    expect(await agentClient.waitForClose(1000)).to.deep.equal({ code: 4205, reason: 'DISCONNECTED_BY_ADMIN' });
    await appClient.expectNothingBeforePong(); // the app's connection stays

    const again = await admin(bridge, 'connections', 'disconnect', agentConnection.connection_id);
    expect(again.code).to.equal(1);
    expect(again.stdout).to.equal('');
    expect(again.stderr)
      .to.match(/^bridge: NOT_FOUND: /)
      .and.include(agentConnection.connection_id);
  });

  it('renames organizations and apps, updates an agent, and shows the changes in the audit trail', async function () {
    const bridge = await startTestBridge();
    const org = await bridge.org('Acme');
    const app = await bridge.app(org.org_id, 'Classroom');
    const agent = await bridge.agent(org.org_id, 'Tutor');

    expect(json(await admin(bridge, 'orgs', 'rename', org.org_id, 'Acme Europe'))).to.deep.equal({
      ...org,
      name: 'Acme Europe',
    });
    expect(json(await admin(bridge, 'apps', 'rename', app.app_id, 'Classroom iOS'))).to.include({
      app_id: app.app_id,
      name: 'Classroom iOS',
    });
    const updated = json(
      await admin(bridge, 'agents', 'update', agent.agent_id, '--description', 'Explains maths.', '--ttl-days', '30'),
    );
    expect(updated).to.include({
      agent_id: agent.agent_id,
      name: 'Tutor',
      description: 'Explains maths.',
      ttl_days: 30,
    });
    expect(json(await admin(bridge, 'agents', 'update', agent.agent_id, '--name', 'Maths Tutor'))).to.include({
      name: 'Maths Tutor',
      ttl_days: 30,
    });

    const nothing = await admin(bridge, 'agents', 'update', agent.agent_id);
    expect(nothing.code).to.equal(1);
    expect(nothing.stderr).to.match(/--name, --description, --ttl-days/);
    const unknown = await admin(bridge, 'apps', 'rename', 'nope-abc123', 'X');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.match(/^bridge: NOT_FOUND: /);

    const audit = json(await admin(bridge, 'audit', '--limit', '2'));
    expect(audit.entries.map((e: { action: string }) => e.action)).to.deep.equal(['agent.update', 'agent.update']);
    const older = json(await admin(bridge, 'audit', '--before', String(audit.next_before)));
    expect(older.entries.map((e: { action: string }) => e.action)).to.deep.equal([
      'app.update',
      'organization.update',
      'agent.create',
      'app.create',
      'organization.create',
    ]);
    expect(older.next_before).to.equal(null);
  });

  it('lists a page at a time with --search, --limit and --after, and tells on stderr how to get the next page', async function () {
    const bridge = await startTestBridge();
    const ids = [];
    for (const name of ['Acme One', 'Acme Two', 'Acme Three', 'Beta']) ids.push((await bridge.org(name)).org_id);
    const acme = ids.slice(0, 3).sort();

    const first = await admin(bridge, 'orgs', 'list', '--search', 'ACME', '--limit', '2');
    expect(json(first).organizations.map((o: { org_id: string }) => o.org_id)).to.deep.equal(acme.slice(0, 2));
    expect(json(first).next_after).to.equal(acme[1]);
    expect(first.stderr.trim()).to.equal(`more follow: bridge orgs list --search "ACME" --limit 2 --after ${acme[1]}`);
    const second = await admin(bridge, 'orgs', 'list', '--search', 'ACME', '--limit', '2', '--after', acme[1]!);
    expect(json(second)).to.deep.equal({
      organizations: [(await bridge.http('GET', `/admin/v1/organizations?q=${acme[2]}`)).body.organizations[0]],
      next_after: null,
    });
    expect(second.stderr).to.equal('');

    const all = await admin(bridge, 'orgs', 'list');
    expect(json(all).organizations).to.have.length(4);
    expect(all.stderr).to.equal('');

    const org = await bridge.org('Apps Org');
    const apps = [await bridge.app(org.org_id, 'iOS'), await bridge.app(org.org_id, 'Android')]
      .map((a) => a.app_id)
      .sort();
    const appPage = await admin(bridge, 'apps', 'list', org.org_id, '--limit', '1');
    expect(json(appPage).apps.map((a: { app_id: string }) => a.app_id)).to.deep.equal([apps[0]]);
    expect(appPage.stderr.trim()).to.equal(`more follow: bridge apps list ${org.org_id} --limit 1 --after ${apps[0]}`);
    const agent = await bridge.agent(org.org_id, 'Grader');
    expect(
      json(await admin(bridge, 'agents', 'list', org.org_id, '--search', 'grad')).agents.map(
        (a: { agent_id: string }) => a.agent_id,
      ),
    ).to.deep.equal([agent.agent_id]);

    const bad = await admin(bridge, 'orgs', 'list', '--limit', '0');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/^bridge: INVALID_REQUEST: limit/);
  });

  it('filters the event log by organization and time range', async function () {
    const bridge = await startTestBridge();
    const { org, agent, appClient, agentClient } = await bridge.pair();
    const other = await bridge.pair();
    const send = async (client: typeof appClient, to: typeof agentClient, agentId: string) => {
      const { event_id } = await startEvent(client, to, agentId);
      to.send({ type: 'reply', event_id, content: 'ok', done: true });
      await client.expect('reply');
      return event_id;
    };
    const early = await send(appClient, agentClient, agent.agent_id);
    bridge.clock.advance(60_000);
    const boundary = new Date(bridge.clock.now()).toISOString();
    const late = await send(appClient, agentClient, agent.agent_id);
    await send(other.appClient, other.agentClient, other.agent.agent_id);

    const ofOrg = json(await admin(bridge, 'events', '--org-id', org.org_id));
    expect(ofOrg.events.map((e: { event_id: string }) => e.event_id)).to.deep.equal([late, early]);
    expect(
      json(await admin(bridge, 'events', '--org-id', org.org_id, '--since', boundary)).events.map(
        (e: { event_id: string }) => e.event_id,
      ),
    ).to.deep.equal([late]);
    expect(
      json(await admin(bridge, 'events', '--org-id', org.org_id, '--until', boundary)).events.map(
        (e: { event_id: string }) => e.event_id,
      ),
    ).to.deep.equal([early]);
    const bad = await admin(bridge, 'events', '--since', 'yesterday');
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/^bridge: INVALID_REQUEST: since/);
  });

  it('exits 1 with the error code on stderr for a wrong admin token, and says it cannot reach a bridge that is not there (worth retrying, unlike the wrong token)', async function () {
    const bridge = await startTestBridge();
    const port = await closedPort();
    const [wrong, unreachable] = await Promise.all([
      bridgeCommand(['--url', bridge.url, '--admin-token', `${ADMIN_TOKEN}-wrong`, 'orgs', 'list']),
      bridgeCommand(['--url', `http://127.0.0.1:${port}`, '--admin-token', ADMIN_TOKEN, 'orgs', 'list']),
    ]);

    expect(wrong.code).to.equal(1);
    expect(wrong.stdout).to.equal('');
    expect(wrong.stderr).to.match(/^bridge: UNAUTHORIZED: \S/);
    expect(wrong.stderr).not.to.include(ADMIN_TOKEN);
    expect(wrong.stderr, 'a wrong token stays wrong: no retry hint (catalogue retry: false)').not.to.include(
      'tried again later',
    );

    expect(unreachable.code).to.equal(1);
    expect(unreachable.stdout).to.equal('');
    expect(unreachable.stderr)
      .to.match(/^bridge: /)
      .and.match(/cannot reach the bridge/);
    expect(unreachable.stderr).to.include(`127.0.0.1:${port}`);
    expect(unreachable.stderr).to.include('this may succeed if tried again later');
  });

  it('takes the admin token and URL from ADMIN_TOKEN and BRIDGE_URL, and never prints the token in --help', async function () {
    const bridge = await startTestBridge();
    const env = { ADMIN_TOKEN, BRIDGE_URL: bridge.url };
    const [help, orgsHelp, listed] = await Promise.all([
      bridgeCommand(['--help'], env),
      bridgeCommand(['orgs', 'create', '--help'], env),
      bridgeCommand(['orgs', 'list'], env),
    ]);
    expect(help.code).to.equal(0);
    expect(help.stdout).to.include('--admin-token').and.include('ADMIN_TOKEN');
    for (const run of [help, orgsHelp]) expect(run.stdout + run.stderr).not.to.include(ADMIN_TOKEN);
    expect(json(listed)).to.have.property('organizations');
  });

  it('prints the version of package.json with --version and -V, and nothing else', async function () {
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const run = await bridgeCommand([flag]);
      expect(run, flag).to.deep.equal({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });

  it('refuses to serve with an invalid configuration, naming the variable', async function () {
    // Every other configuration variable blanked (empty means unset), so only PORT can be at fault.
    const blank = Object.fromEntries(
      ['HOST', 'ADMIN_TOKEN', 'AGENT_TIMEOUT_MS', 'BRIDGE_TEST_CLOCK'].map((k) => [k, '']),
    );
    const run = await bridgeCommand(['serve'], {
      ...blank,
      PORT: 'abc',
      DATABASE_URL: 'sqlite::memory:',
      LOG_LEVEL: 'silent',
    });
    expect(run.code).to.equal(1);
    expect(run.stderr)
      .to.match(/^bridge: /)
      .and.include('PORT');
    expect(run.stderr).not.to.include('listening');
  });

  it('ends every start-up failure with one line that says what to fix, and exit 1 (port taken, address not here, database unusable)', async function () {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-cli-start-'));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as { port: number };
      await mkdir(join(dir, 'a-folder.sqlite'));
      await writeFile(join(dir, 'not-sqlite.sqlite'), 'these bytes are not an SQLite database, not even its header\n');
      const blank = Object.fromEntries(
        ['ADMIN_TOKEN', 'AGENT_TIMEOUT_MS', 'BRIDGE_TEST_CLOCK', 'LOG_LEVEL'].map((k) => [k, '']),
      );
      // A documentation address (RFC 5737) that this machine does not have (a test network may use one of them).
      const mine = Object.values(networkInterfaces())
        .flat()
        .map((a) => a?.address);
      const notHere = ['192.0.2.1', '198.51.100.1', '203.0.113.1'].find((a) => !mine.includes(a))!;
      const serve = (env: Record<string, string>) =>
        bridgeCommand(['serve'], { ...blank, HOST: '127.0.0.1', PORT: '0', DATABASE_URL: 'sqlite::memory:', ...env });
      const cases: [Record<string, string>, RegExp][] = [
        [
          { PORT: String(port) },
          new RegExp(
            `^bridge: cannot listen on 127\\.0\\.0\\.1:${port} \\(PORT, HOST\\): the port is already in use .*EADDRINUSE`,
          ),
        ],
        [
          { HOST: notHere },
          new RegExp(
            `^bridge: cannot listen on ${notHere.replaceAll('.', '\\.')}:0 \\(PORT, HOST\\): that address is not one of this machine .*EADDRNOTAVAIL`,
          ),
        ],
        [
          { DATABASE_URL: `sqlite:${join(dir, 'a-folder.sqlite')}` },
          /^bridge: cannot open the database sqlite:.*a-folder\.sqlite: SQLITE_CANTOPEN/,
        ],
        [
          { DATABASE_URL: `sqlite:${join(dir, 'not-sqlite.sqlite')}` },
          /^bridge: cannot open the database sqlite:.*not-sqlite\.sqlite: SQLITE_NOTADB/,
        ],
        [
          { DATABASE_URL: `sqlite:${join(dir, 'not-sqlite.sqlite', 'x', 'b.sqlite')}` },
          /^bridge: cannot create the folder of the database .*ENOTDIR/,
        ],
      ];
      const runs = await Promise.all(cases.map(([env]) => serve(env)));
      for (const [i, run] of runs.entries()) {
        const what = JSON.stringify(cases[i]![0]);
        expect(run.code, `${what}: ${run.stderr}`).to.equal(1);
        expect(run.stderr, what).to.match(cases[i]![1]);
        expect(run.stderr.trimEnd().split('\n'), `${what}: one line on stderr`).to.have.length(1);
        expect(run.stdout, `${what}: no stack on stdout`).not.to.match(/^\s+at /m);
      }
    } finally {
      taken.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('ends a start-up failure of TLS or of the metrics port with one line naming the variable, and exit 1', async function () {
    const dir = await mkdtemp(join(tmpdir(), 'bridge-cli-tls-'));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as { port: number };
      const [mine, other] = [await selfSignedCertificate(dir, 'mine'), await selfSignedCertificate(dir, 'other')];
      const blank = Object.fromEntries(
        ['ADMIN_TOKEN', 'AGENT_TIMEOUT_MS', 'BRIDGE_TEST_CLOCK', 'LOG_LEVEL', 'TRUST_PROXY', 'METRICS_HOST'].map(
          (k) => [k, ''],
        ),
      );
      const serve = (env: Record<string, string>) =>
        bridgeCommand(['serve'], {
          ...blank,
          HOST: '127.0.0.1',
          PORT: '0',
          DATABASE_URL: 'sqlite::memory:',
          TLS_CERT_FILE: '',
          TLS_KEY_FILE: '',
          METRICS_PORT: '',
          ...env,
        });
      const missing = join(dir, 'missing.pem');
      const cases: [Record<string, string>, RegExp][] = [
        [
          { TLS_CERT_FILE: missing, TLS_KEY_FILE: mine.keyFile },
          /^bridge: cannot read TLS_CERT_FILE .*missing\.pem: no such file \(ENOENT\)$/,
        ],
        [
          { TLS_CERT_FILE: mine.certFile, TLS_KEY_FILE: dir },
          /^bridge: cannot read TLS_KEY_FILE .*: it is a folder, not a file \(EISDIR\)$/,
        ],
        [
          { TLS_CERT_FILE: mine.keyFile, TLS_KEY_FILE: mine.keyFile },
          /^bridge: TLS_CERT_FILE .*mine\.key\.pem: it is not a PEM certificate/,
        ],
        [
          { TLS_CERT_FILE: mine.certFile, TLS_KEY_FILE: mine.certFile },
          /^bridge: TLS_KEY_FILE .*mine\.cert\.pem: it is not a PEM private key/,
        ],
        [
          { TLS_CERT_FILE: mine.certFile, TLS_KEY_FILE: other.keyFile },
          /^bridge: TLS_KEY_FILE .*other\.key\.pem is not the key of the certificate in TLS_CERT_FILE .*mine\.cert\.pem/,
        ],
        [
          { TLS_CERT_FILE: mine.certFile },
          /^bridge: Invalid configuration: TLS_CERT_FILE is set but TLS_KEY_FILE is not/,
        ],
        [
          { METRICS_PORT: String(port) },
          new RegExp(
            `^bridge: cannot listen on 127\\.0\\.0\\.1:${port} \\(METRICS_PORT, METRICS_HOST\\): the port is already in use .*EADDRINUSE`,
          ),
        ],
      ];
      const runs = await Promise.all(cases.map(([env]) => serve(env)));
      for (const [i, run] of runs.entries()) {
        const what = JSON.stringify(cases[i]![0]);
        expect(run.code, `${what}: ${run.stderr}`).to.equal(1);
        expect(run.stderr.trimEnd().split('\n'), `${what}: one line on stderr`).to.have.length(1);
        expect(run.stderr.trimEnd(), what).to.match(cases[i]![1]);
        expect(run.stdout, `${what}: nothing listened`).not.to.include('bridge listening');
      }
    } finally {
      taken.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
