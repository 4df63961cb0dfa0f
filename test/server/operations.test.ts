// Operations (spec/openapi.yaml /metrics and /readyz): Prometheus metrics without identifiers, readiness that turns
// 503 SHUTTING_DOWN once a shutdown has begun, and logs that never carry a token, a secret or a payload.
import { readFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import {
  CLOSE_CODES,
  ERROR_CODES,
  validateAuditAction,
  validators,
  type AgentCreated,
  type AppCreated,
  type Organization,
} from '../../generated/index.js';
import { AdjustableClock } from '../../src/shared/clock.js';
import { ACCEPT_FAILURE_REASONS, ACCEPT_FAILURE_WINDOW_MS, FD_RESERVE } from '../../src/ops/accept-failures.js';
import { startServer, type RunningBridge } from '../../src/server.js';
import { startTestBridge, testConfig } from '../helpers/bridge.js';
import { startEvent } from '../helpers/events.js';
import { startBridgeProcess, stopBridgeProcesses } from '../helpers/process.js';
import { parseMetrics, sample } from '../helpers/metrics.js';
import { TestClient, type AgentClient, type AppClient, type Carrier } from '../helpers/ws-client.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('operations: /metrics, /readyz and logs', function () {
  describe('GET /metrics', function () {
    it('exposes connections, events by status and outcome, tokens, latency, pending rows, the version and process metrics, with no identifier in any label', async function () {
      const bridge = await startTestBridge();
      const org = await bridge.org();
      const app1 = await bridge.app(org.org_id, 'Metrics App One');
      const app2 = await bridge.app(org.org_id, 'Metrics App Two');
      const agent1 = await bridge.agent(org.org_id, 'Metrics Agent One');
      const agent2 = await bridge.agent(org.org_id, 'Metrics Agent Two');
      const agentClient1 = await bridge.connectAgent(agent1.token);
      const agentClient2 = await bridge.connectAgent(agent2.token, 'query');
      const appClient1 = await bridge.connectApp(app1.token);
      const appClient2 = await bridge.connectApp(app1.token, 'query'); // a second instance of the same app
      const appClient3 = await bridge.connectApp(app2.token);
      for (const c of [agentClient1, agentClient2, appClient1, appClient2, appClient3])
        await c.expectNothingBeforePong();

      // Replied events: 3 to agent1 with 2 tokens each, 1 to agent2 with 1 token.
      let tokens = 0;
      let replied = 0;
      const run = async (appClient: AppClient, agentClient: AgentClient, agentId: string, fragments: string[]) => {
        const { event_id } = await startEvent(appClient, agentClient, agentId, 'metrics-thread', { q: 'metrics' });
        for (const token of fragments) {
          agentClient.send({ type: 'token', event_id, token });
          await appClient.expect('token');
          tokens++;
        }
        agentClient.send({ type: 'reply', event_id, content: '', done: true });
        await appClient.expect('reply');
        replied++;
        return event_id;
      };
      await run(appClient1, agentClient1, agent1.agent_id, ['a', 'b']);
      await run(appClient2, agentClient1, agent1.agent_id, ['c', 'd']);
      await run(appClient3, agentClient1, agent1.agent_id, ['e', 'f']);
      await run(appClient1, agentClient2, agent2.agent_id, ['g']);

      // One event that ends with the agent's error: delivered, agent_error, not in the latency histogram.
      appClient1.send({ type: 'event', agent_id: agent1.agent_id, thread_id: 'metrics-thread', payload: {} });
      const failed = await appClient1.expect('accepted');
      await agentClient1.expect('event');
      agentClient1.send({ type: 'error', event_id: failed.event_id, error: 'nope', code: 'MODEL_DOWN' });
      expect((await appClient1.expect('error')).code).to.equal('AGENT_ERROR');

      // Rejections: an unknown agent, and a malformed thread id.
      appClient1.send({ type: 'event', agent_id: 'no-such-agent', thread_id: 't', payload: {} });
      expect((await appClient1.expect('error')).code).to.equal('AGENT_NOT_FOUND');
      appClient2.send({ type: 'event', agent_id: agent1.agent_id, thread_id: '', payload: {} });
      expect((await appClient2.expect('error')).code).to.equal('INVALID_THREAD_ID');
      const rejected = 2;

      const response = await fetch(new URL('/metrics', bridge.url));
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^text\/plain/);
      const text = await response.text();
      const samples = parseMetrics(text);

      expect(sample(samples, 'bridge_connections', { kind: 'app' }), 'app connections').to.equal(3);
      expect(sample(samples, 'bridge_connections', { kind: 'agent' }), 'agent connections').to.equal(2);
      expect(sample(samples, 'bridge_events_total', { status: 'delivered', outcome: 'replied' }), 'replied').to.equal(
        replied,
      );
      expect(
        sample(samples, 'bridge_events_total', { status: 'delivered', outcome: 'agent_error' }),
        'agent_error',
      ).to.equal(1);
      expect(sample(samples, 'bridge_events_total', { status: 'rejected', outcome: 'rejected' }), 'rejected').to.equal(
        rejected,
      );
      expect(sample(samples, 'bridge_tokens_forwarded_total'), 'tokens').to.equal(tokens).and.equal(7);
      expect(sample(samples, 'bridge_event_latency_seconds_count'), 'latency count').to.equal(replied).and.equal(4);
      expect(sample(samples, 'bridge_events_in_flight'), 'in flight').to.equal(0);
      const pending = sample(samples, 'bridge_event_log_pending_rows');
      expect(pending, 'bridge_event_log_pending_rows').to.be.a('number').and.at.least(0);
      expect(sample(samples, 'process_cpu_user_seconds_total'), 'process_cpu_user_seconds_total')
        .to.be.a('number')
        .and.at.least(0);
      // The version it runs, package.json's, as the one series of bridge_build_info.
      const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
        version: string;
      };
      expect(samples.filter((s) => s.name === 'bridge_build_info')).to.deep.equal([
        { name: 'bridge_build_info', labels: { version }, value: 1 },
      ]);

      // A second scrape counts tokens once (the counter is read from the bridge, not re-added).
      const again = parseMetrics(await (await fetch(new URL('/metrics', bridge.url))).text());
      expect(sample(again, 'bridge_tokens_forwarded_total')).to.equal(7);

      // No identifier, token or secret anywhere: not in a label value, not in the text at all.
      const secrets = [
        org.org_id,
        app1.app_id,
        app2.app_id,
        agent1.agent_id,
        agent2.agent_id,
        failed.event_id,
        app1.token,
        app2.token,
        agent1.token,
        agent2.token,
      ];
      for (const s of samples) {
        for (const [key, value] of Object.entries(s.labels)) {
          for (const secret of secrets) expect(value, `${s.name}{${key}}`).not.to.include(secret);
        }
      }
      for (const secret of secrets) expect(text).not.to.include(secret);
      const bridgeLabels = new Set(
        samples.filter((s) => s.name.startsWith('bridge_')).flatMap((s) => Object.keys(s.labels)),
      );
      expect([...bridgeLabels].sort()).to.deep.equal([
        'action',
        'bound',
        'code',
        'kind',
        'le',
        'limit',
        'outcome',
        'reason',
        'status',
        'version',
      ]);
      // A `code` label is a catalogue code, an `action` one of the audit trail's (D10), never anything a client chose.
      for (const s of samples.filter((x) => x.labels.code !== undefined))
        expect(ERROR_CODES, s.name).to.include(s.labels.code);
      for (const s of samples.filter((x) => x.labels.action !== undefined))
        expect(validateAuditAction(s.labels.action), `${s.name}{action="${s.labels.action}"}`).to.equal(true);
      // The bounds' counters (L13-L16) name a bound or a reason, from a fixed set, and start at 0.
      const bounds = /^bridge_(events_refused|streamed_text_discarded|replies_refused)_total$/;
      const limitValues = samples
        .filter((s) => bounds.test(s.name))
        .map((s) => `${s.name}{${s.labels.limit ?? s.labels.reason}} ${s.value}`);
      expect(limitValues.sort()).to.deep.equal([
        'bridge_events_refused_total{agent} 0',
        'bridge_events_refused_total{app} 0',
        'bridge_events_refused_total{payloads} 0',
        'bridge_events_refused_total{total} 0',
        'bridge_replies_refused_total{text_not_kept} 0',
        'bridge_replies_refused_total{too_large} 0',
        'bridge_streamed_text_discarded_total{agent_limit} 0',
        'bridge_streamed_text_discarded_total{app_gone} 0',
        'bridge_streamed_text_discarded_total{event_limit} 0',
        'bridge_streamed_text_discarded_total{node_limit} 0',
      ]);
      // The bounds on bytes held for connections (W17, L19, L20) and dead connections (L7, L22), likewise.
      const held =
        /^bridge_(slow_consumers|incomplete_messages|closing_connections_destroyed|heartbeat_timeouts|unauthenticated_connections_refused)_total$/;
      const heldValues = samples
        .filter((s) => held.test(s.name))
        .map((s) => `${s.name}{${s.labels.bound ?? s.labels.reason}} ${s.value}`);
      expect(heldValues.sort()).to.deep.equal([
        'bridge_closing_connections_destroyed_total{agent} 0',
        'bridge_closing_connections_destroyed_total{app} 0',
        'bridge_closing_connections_destroyed_total{timeout} 0',
        'bridge_closing_connections_destroyed_total{total} 0',
        'bridge_heartbeat_timeouts_total{no_pong} 0',
        'bridge_heartbeat_timeouts_total{silent} 0',
        'bridge_incomplete_messages_total{agent} 0',
        'bridge_incomplete_messages_total{app} 0',
        'bridge_incomplete_messages_total{timeout} 0',
        'bridge_incomplete_messages_total{total} 0',
        'bridge_slow_consumers_total{agent} 0',
        'bridge_slow_consumers_total{app} 0',
        'bridge_slow_consumers_total{connection} 0',
        'bridge_slow_consumers_total{total} 0',
        'bridge_unauthenticated_connections_refused_total{address} 0',
        'bridge_unauthenticated_connections_refused_total{total} 0',
      ]);
      expect(sample(samples, 'bridge_partial_message_bytes')).to.equal(0);
      expect(sample(samples, 'bridge_send_buffer_bytes')).to.be.a('number').and.at.least(0);
      expect(sample(samples, 'bridge_http_requests_timed_out_total')).to.equal(0);
      expect(sample(samples, 'bridge_unauthenticated_connections_evicted_total')).to.equal(0);
      // This scrape's own connection is unauthenticated, and so may be keep-alive connections of earlier calls.
      expect(sample(samples, 'bridge_unauthenticated_connections')).to.be.at.least(1);
      // Connections it could not accept (O8): every reason present from the start, at 0.
      for (const reason of ACCEPT_FAILURE_REASONS)
        expect(sample(samples, 'bridge_accept_failures_total', { reason }), reason).to.equal(0);
    });
  });

  describe('GET /readyz', function () {
    it('answers 200 {status: ready} while the bridge takes traffic', async function () {
      const bridge = await startTestBridge();
      const res = await bridge.http('GET', '/readyz', { token: null, schema: 'Readiness' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ready' });
    });

    it('answers 503 SHUTTING_DOWN to a request that arrives once the shutdown has begun', async function () {
      const bridge = await startTestBridge();
      const { agent, appClient, agentClient } = await bridge.pair();
      // An event in flight: the shutdown then has an event-log row to flush, which keeps the server up (with the
      // request below already on its connection) for a few event-loop turns after `close()` starts.
      const { event_id } = await startEvent(appClient, agentClient, agent.agent_id);

      // A request whose headers are not finished yet: its connection is busy, so server.close() does not drop it
      // as an idle keep-alive connection, and the handler runs only once the last line arrives.
      const socket: Socket = netConnect(bridge.port, '127.0.0.1');
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      let raw = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk));
      const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      await sleep(100); // the server has read the first lines

      const closing = bridge.close(); // not awaited: the request finishes during the shutdown
      socket.write('Connection: close\r\n\r\n');
      await ended;
      await closing;

      const [head, body] = raw.split('\r\n\r\n', 2) as [string, string | undefined];
      expect(head, raw).to.match(/^HTTP\/1\.1 503 /);
      const parsed = JSON.parse(body ?? '');
      expect(validators.HttpError(parsed), JSON.stringify(parsed)).to.equal(true);
      expect(parsed.code).to.equal('SHUTTING_DOWN');

      // L11, in passing: the event in flight ended with SHUTTING_DOWN, then 1001.
      expect(await appClient.expect('error')).to.include({ event_id, agent_id: agent.agent_id, code: 'SHUTTING_DOWN' });
      expect((await appClient.waitForClose()).code).to.equal(CLOSE_CODES.GOING_AWAY);
      // And the listener is gone: a new request is refused.
      let refused: unknown;
      await fetch(new URL('/readyz', bridge.url)).then(
        (r) => r.arrayBuffer(),
        (err) => (refused = err),
      );
      expect(refused, 'a request after the shutdown').to.be.instanceOf(Error);
    });
  });

  describe('logs', function () {
    let running: RunningBridge | undefined;
    const clients: TestClient<any>[] = [];

    afterEach(async function () {
      for (const c of clients.splice(0)) c.close();
      await running?.close();
      running = undefined;
    });

    it('never contain a token, a secret, the admin token or a payload, at level trace, through a whole session', async function () {
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk: Buffer | string, _encoding, done) {
          lines.push(...chunk.toString().split('\n').filter(Boolean));
          done();
        },
      });
      const log = pino({ level: 'trace', base: undefined }, sink);
      const adminToken = `log-admin-${Math.random().toString(36).slice(2)}-0123456789`;
      const config = testConfig({ adminToken, logLevel: 'trace' });
      const clock = new AdjustableClock({ frozen: true, start: Date.parse('2026-11-22T12:00:00.000Z') });
      running = await startServer(config, { clock, log });
      const url = running.url;

      const http = async (method: string, path: string, token: string | null = adminToken, body?: unknown) => {
        const res = await fetch(new URL(path, url), {
          method,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : undefined };
      };
      const connect = async (kind: 'app' | 'agent', token: string, carrier: Carrier) => {
        const client = await TestClient.connect(url, kind, token, carrier);
        clients.push(client);
        return client;
      };
      const refused = async (kind: 'app' | 'agent', token: string, carrier: Carrier, code: string) => {
        const client = await connect(kind, token, carrier);
        expect((await client.expect('error')).code).to.equal(code);
        await client.waitForClose();
      };

      const marker = `PAYLOAD-MARKER-${Math.random().toString(36).slice(2)}`;
      const fragmentMarker = `FRAGMENT-MARKER-${Math.random().toString(36).slice(2)}`;

      // Provisioning through the admin API.
      const org: Organization = (await http('POST', '/admin/v1/organizations', adminToken, { name: 'Log Org' })).body;
      const app: AppCreated = (
        await http('POST', `/admin/v1/organizations/${org.org_id}/apps`, adminToken, { name: 'Log App' })
      ).body;
      const agent: AgentCreated = (
        await http('POST', `/admin/v1/organizations/${org.org_id}/agents`, adminToken, {
          name: 'Log Agent',
          description: 'logs',
        })
      ).body;
      expect(app.token).to.match(/^rlk_/);
      expect(agent.token).to.match(/^rla_/);
      const secretOf = (token: string) => token.slice(token.lastIndexOf('_') + 1);

      // Wrong tokens everywhere.
      const wrongAdmin = `${adminToken}-wrong`;
      const wrongApp = `rlk_${app.app_id}_${'W'.repeat(20)}${Math.random().toString(36).slice(2)}`;
      const wrongAgent = `rla_${agent.agent_id}_${'V'.repeat(20)}${Math.random().toString(36).slice(2)}`;
      const garbage = `garbage-token-${Math.random().toString(36).slice(2)}`;
      expect((await http('GET', '/admin/v1/organizations', wrongAdmin)).status).to.equal(401);
      expect((await http('GET', '/admin/v1/organizations', app.token)).status).to.equal(401);
      expect((await http('GET', `/v1/organizations/${org.org_id}/agents`, wrongApp)).status).to.equal(401);
      expect((await http('GET', `/v1/organizations/${org.org_id}/agents`, app.token)).status).to.equal(200);
      await refused('app', wrongApp, 'query', 'UNAUTHORIZED');
      await refused('app', wrongApp, 'header', 'UNAUTHORIZED');
      await refused('agent', wrongAgent, 'header', 'UNAUTHORIZED');
      await refused('agent', garbage, 'query', 'UNAUTHORIZED');
      await refused('agent', app.token, 'query', 'FORBIDDEN');
      await refused('app', agent.token, 'header', 'FORBIDDEN');

      // A session: the agent by header, the app by query, an event with the marker, tokens, a reply.
      const agentClient = await connect('agent', agent.token, 'header');
      const appClient = await connect('app', app.token, 'query');
      const appByBoth = await connect('app', app.token, 'both');
      await appByBoth.expectNothingBeforePong();
      appClient.send({
        type: 'event',
        agent_id: agent.agent_id,
        thread_id: 'log-thread',
        payload: { text: marker, nested: { again: marker } },
      });
      const { event_id } = await appClient.expect('accepted');
      expect((await agentClient.expect('event')).payload).to.deep.equal({ text: marker, nested: { again: marker } });
      agentClient.send({ type: 'token', event_id, token: fragmentMarker });
      expect((await appClient.expect('token')).token).to.equal(fragmentMarker);
      agentClient.send({
        type: 'reply',
        event_id,
        content: `${fragmentMarker} ${marker}`,
        done: true,
        metadata: { model: marker },
      });
      expect((await appClient.expect('reply')).payload).to.deep.equal({ text: marker, nested: { again: marker } });
      // The marker in rejected and invalid events too.
      appClient.send({ type: 'event', agent_id: 'no-such-agent', thread_id: 't', payload: { text: marker } });
      expect((await appClient.expect('error')).code).to.equal('AGENT_NOT_FOUND');
      appClient.send({ type: 'event', agent_id: agent.agent_id, thread_id: 't', payload: marker });
      expect((await appClient.expect('error')).code).to.equal('INVALID_MESSAGE');
      appClient.send(`{"type":"event","payload":"${marker}"`);
      expect((await appClient.expect('error')).code).to.equal('INVALID_JSON');
      agentClient.send({ type: 'token', event_id, token: marker });
      expect((await agentClient.expect('error')).code).to.equal('INVALID_EVENT_ID');

      // Rotations: the new tokens work at once, the old ones during their grace.
      const rotatedApp = await http('POST', `/admin/v1/apps/${app.app_id}/rotate-token`);
      expect(rotatedApp.status).to.equal(200);
      const rotatedAgent = await http('POST', `/admin/v1/agents/${agent.agent_id}/rotate-token`);
      expect(rotatedAgent.status).to.equal(200);
      const newAppToken: string = rotatedApp.body.token;
      const newAgentToken: string = rotatedAgent.body.token;
      await (await connect('app', newAppToken, 'query')).expectNothingBeforePong();
      await (await connect('app', app.token, 'header')).expectNothingBeforePong();
      const agentAgain = await connect('agent', newAgentToken, 'query'); // replaces the first agent connection
      expect((await agentClient.expect('error')).code).to.equal('CONNECTION_REPLACED');
      await agentAgain.expectNothingBeforePong();

      // Deactivation: connections close TOKEN_REVOKED, later handshakes are refused.
      expect((await http('POST', `/admin/v1/agents/${agent.agent_id}/deactivate`)).status).to.equal(200);
      expect((await agentAgain.expect('error')).code).to.equal('TOKEN_REVOKED');
      expect((await http('POST', `/admin/v1/apps/${app.app_id}/deactivate`)).status).to.equal(200);
      expect((await appClient.expect('error')).code).to.equal('TOKEN_REVOKED');
      await refused('app', newAppToken, 'query', 'TOKEN_REVOKED');
      await refused('agent', newAgentToken, 'header', 'TOKEN_REVOKED');

      const stopping = running;
      running = undefined;
      await stopping.close();

      // The logger saw the session (so an empty log cannot pass), and nothing secret is in it.
      expect(lines.length, 'log lines').to.be.greaterThan(5);
      const all = lines.join('\n');
      expect(all).to.include('handshakes refused').and.include('connection open').and.include('bridge listening');
      const forbidden: [string, string][] = [
        ['admin token', adminToken],
        ['wrong admin token', wrongAdmin],
        ['app token', app.token],
        ['app secret', secretOf(app.token)],
        ['agent token', agent.token],
        ['agent secret', secretOf(agent.token)],
        ['rotated app token', newAppToken],
        ['rotated app secret', secretOf(newAppToken)],
        ['rotated agent token', newAgentToken],
        ['rotated agent secret', secretOf(newAgentToken)],
        ['wrong app token', wrongApp],
        ['wrong agent token', wrongAgent],
        ['garbage token', garbage],
        ['payload marker', marker],
        ['token fragment marker', fragmentMarker],
      ];
      for (const line of lines) {
        for (const [what, secret] of forbidden) {
          if (line.includes(secret)) expect.fail(`a log line contains the ${what}: ${line}`);
        }
      }
    });
  });
  describe('connections it cannot accept (O8)', function () {
    let running: RunningBridge | undefined;
    let lines: any[];
    let clock: AdjustableClock;

    beforeEach(async function () {
      lines = [];
      const sink = new Writable({
        write(chunk: Buffer | string, _encoding, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
          done();
        },
      });
      clock = new AdjustableClock({ frozen: true, start: Date.parse('2026-11-22T12:00:00.000Z') });
      running = await startServer(testConfig(), { clock, log: pino({ level: 'info', base: undefined }, sink) });
    });

    afterEach(async function () {
      await running?.close();
      running = undefined;
      await stopBridgeProcesses();
    });

    const acceptError = (code: string) =>
      Object.assign(new Error(`accept ${code}`), { code, errno: -24, syscall: 'accept' });
    const failureLines = () => lines.filter((l) => /^accept fail/.test(l.msg));
    const readyz = async () => {
      const res = await fetch(new URL('/readyz', running!.url));
      return { status: res.status, body: (await res.json()) as { code?: string; error?: string; status?: string } };
    };
    const metric = async (reason: string) =>
      sample(
        parseMetrics(await (await fetch(new URL('/metrics', running!.url))).text()),
        'bridge_accept_failures_total',
        { reason },
      );
    const jsonLines = (text: string) =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));

    it('caps its connections below the open-files limit, keeping the files open at start and a reserve', function () {
      if (process.platform !== 'linux') this.skip();
      const limit = Number(/^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))![1]);
      expect(running!.server.maxConnections)
        .to.be.a('number')
        .and.at.most(limit - FD_RESERVE)
        .and.above(limit / 2);
      expect(lines.find((l) => l.msg === 'bridge listening')).to.have.property(
        'maxConnections',
        running!.server.maxConnections,
      );
    });

    it('counts accept errors without crashing, logs the first at once and the rest once per window with their count, and /readyz answers 503 OVERLOADED until a window passes without one', async function () {
      const server = running!.server;
      server.emit('error', acceptError('EMFILE')); // before: the second such event was unhandled and ended the process
      server.emit('error', acceptError('EMFILE'));
      server.emit('error', acceptError('ENFILE'));
      server.emit('error', acceptError('EWHATEVER'));

      expect(failureLines()).to.have.length(1);
      expect(failureLines()[0]).to.include({ level: 50, failures: 1 });
      expect(failureLines()[0].msg).to.equal(
        "accept failed 1 time(s): EMFILE x1 (the process's open-files limit is reached; raise it (ulimit -n, LimitNOFILE))",
      );
      expect(await metric('EMFILE')).to.equal(2);
      expect(await metric('ENFILE')).to.equal(1);
      expect(await metric('OTHER')).to.equal(1);

      const notReady = await readyz();
      expect(notReady.status).to.equal(503);
      expect(validators.HttpError(notReady.body), JSON.stringify(notReady.body)).to.equal(true);
      expect(notReady.body.code).to.equal('OVERLOADED');
      expect(notReady.body.error)
        .to.include('could not accept 4 connection(s) since 2026-11-22T12:00:00.000Z')
        .and.include('EMFILE x2')
        .and.include('ENFILE x1');

      // The window ends: one line for the three that were not logged yet.
      clock.advance(ACCEPT_FAILURE_WINDOW_MS - 1);
      expect(failureLines()).to.have.length(1);
      expect((await readyz()).status, 'a failure 9.999 s ago').to.equal(503);
      clock.advance(1);
      expect(failureLines()).to.have.length(2);
      expect(failureLines()[1]).to.deep.include({
        level: 50,
        failures: 3,
        reasons: { EMFILE: 1, ENFILE: 1, OTHER: 1 },
      });
      expect(failureLines()[1].msg).to.match(
        /^accept failed 3 time\(s\): EMFILE x1 \(.*\), ENFILE x1 \(the system's open-files table is full/,
      );
      expect((await readyz()).status, '10 s after the last failure').to.equal(200);

      // A quiet window ends the burst with one line; the next failure is logged at once again.
      clock.advance(ACCEPT_FAILURE_WINDOW_MS);
      expect(failureLines()).to.have.length(3);
      expect(failureLines()[2]).to.include({ level: 30, msg: 'accept failures stopped: none in the last window' });
      clock.advance(ACCEPT_FAILURE_WINDOW_MS * 5);
      expect(failureLines()).to.have.length(3);
      server.emit('error', acceptError('EMFILE'));
      expect(failureLines()).to.have.length(4);
      expect((await readyz()).body.error).to.include('could not accept 1 connection(s)');
    });

    it("drops the connections over its cap itself (Node's 'drop'), and counts and reports them as MAX_CONNECTIONS", async function () {
      const server = running!.server;
      const held = netConnect(running!.port, '127.0.0.1');
      await new Promise<void>((resolve, reject) => held.once('connect', resolve).once('error', reject));
      await sleep(50); // the server has counted it
      server.maxConnections = 1;
      let refused: unknown;
      await fetch(new URL('/healthz', running!.url)).then(
        (r) => r.arrayBuffer(),
        (err) => (refused = err),
      );
      expect(refused, 'a request over the cap').to.be.instanceOf(Error);
      held.destroy();
      server.maxConnections = 1000;

      expect(await metric('MAX_CONNECTIONS')).to.equal(1);
      expect(failureLines()[0].msg).to.match(
        /^accept failed 1 time\(s\): MAX_CONNECTIONS x1 \(over the connection cap \d+ \(the open-files limit \d+ minus/,
      );
      const notReady = await readyz();
      expect(notReady.status).to.equal(503);
      expect(notReady.body.code).to.equal('OVERLOADED');
    });

    it('as a real process with a low open-files limit (ulimit -n 128): extra connections are refused, counted and logged, and /readyz says so', async function () {
      if (process.platform !== 'linux') this.skip();
      this.timeout(60_000);
      const proc = await startBridgeProcess({ LOG_LEVEL: 'info' }, { openFilesLimit: 128 });
      const cap: number = jsonLines(proc.stdout()).find((l) => l.msg === 'bridge listening').maxConnections;
      expect(cap)
        .to.be.a('number')
        .and.below(128 - FD_RESERVE);

      const sockets: Socket[] = [];
      let closed = 0;
      for (let i = 0; i < cap + 20; i++) {
        const socket = netConnect(proc.port, '127.0.0.1');
        socket.on('error', () => {});
        socket.on('close', () => closed++);
        sockets.push(socket);
        await new Promise((resolve) => socket.once('connect', resolve).once('close', resolve));
      }
      await sleep(200);
      expect(closed, 'connections closed by the bridge').to.be.at.least(20);
      for (const s of sockets) s.destroy();
      await sleep(200);

      const ready = await proc.http('GET', '/readyz', { token: null });
      expect(ready.status).to.equal(503);
      expect(ready.body.code).to.equal('OVERLOADED');
      expect(ready.body.error).to.include('MAX_CONNECTIONS x').and.include('the open-files limit 128');
      const failures = jsonLines(proc.stdout()).filter((l) => /^accept failed/.test(l.msg));
      expect(failures, 'one line at once, the rest at the end of the window').to.have.length(1);
      expect(failures[0].msg).to.match(/^accept failed 1 time\(s\): MAX_CONNECTIONS x1 \(over the connection cap /);
      const metrics = parseMetrics(await (await fetch(new URL('/metrics', proc.url))).text());
      expect(sample(metrics, 'bridge_accept_failures_total', { reason: 'MAX_CONNECTIONS' })).to.be.at.least(20);
      expect(
        sample(metrics, 'bridge_accept_failures_total', { reason: 'EMFILE' }),
        'the cap keeps it below EMFILE',
      ).to.equal(0);
    });
  });
});
