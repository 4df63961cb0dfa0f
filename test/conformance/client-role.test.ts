// The client role, end to end: our two SDKs' example clients pass every scenario of their role, slow ones included,
// on the harness's scaled clock (BRIDGE_TIME_SCALE), and deliberately broken clients (broken-clients/) fail exactly
// the scenarios, and the requirements, they break; a client that breaks the harness contract (it exits, or ignores
// the time scale) is told so, and no requirement is blamed for it. Each client is a real command (`node --import
// tsx …`; not npx tsx, which costs two more processes and half a second of CPU a start, and every scenario starts
// one) run against the mock bridge, as a third party's would be.
import { expect } from 'chai';
import { ERRORS } from '../../generated/index.js';
import { APP_EVENT_ERRORS } from '../../conformance/client/scenarios/app.js';
import { runClientScenarios } from '../../conformance/client/run-all.js';
import type { ClientRunOptions } from '../../conformance/client/run.js';
import { CLIENT_SCENARIOS, clientScenarios } from '../../conformance/client/scenarios.js';
import { judge, type ScenarioResult } from '../../conformance/results.js';
import { inProfile, loadRequirements, type Profile } from '../../conformance/scenario.js';

/** The time scale our clients are run at: the heartbeat and backoff scenarios take seconds. */
const SCALE = 10;

/** Runs the role's scenarios of the profile (or only `ids`) against `command`, several at once. */
async function runRole(
  role: 'app' | 'agent',
  command: string,
  o: { ids?: string[]; profile?: Profile } & Partial<ClientRunOptions> = {},
): Promise<ScenarioResult[]> {
  const profile = o.profile ?? 'bridge';
  const scenarios = clientScenarios(role, profile, loadRequirements()).filter((s) => !o.ids || o.ids.includes(s.id));
  expect(scenarios.length, 'scenarios selected').to.equal(o.ids?.length ?? scenarios.length);
  const outcomes = await runClientScenarios(scenarios, { ...o, command, profile }, 8);
  return scenarios.map((s, i) => ({
    id: s.id,
    file: 'client/scenarios.ts',
    title: s.title,
    requirements: s.requirements,
    ...outcomes[i]!,
  }));
}

const failedRequirements = (results: ScenarioResult[]) => {
  const requirements = [...loadRequirements().values()].filter(
    (r) => r.id.startsWith('CLI-') && results.some((s) => s.requirements.includes(r.id)),
  );
  return judge(requirements, results, new Set())
    .requirements.filter((r) => r.verdict === 'failed')
    .map((r) => r.id);
};

const statuses = (results: ScenarioResult[]) => Object.fromEntries(results.map((r) => [r.id, r.status]));
const explain = (results: ScenarioResult[]) =>
  results.map((r) => `${r.id}: ${r.status} in ${r.durationMs} ms${r.reason ? ` — ${r.reason}` : ''}`).join('\n');

/**
 * A passed scenario has seen every requirement it names (of the profile) hold: only those can pass. The rules of
 * every frame and connection (CLI-001, CLI-021, CLI-017) hold only where a frame or connection came: a scenario
 * may end at the client's handshake, or refuse every one.
 */
function expectAllChecked(results: ScenarioResult[], profile: Profile) {
  const registry = loadRequirements();
  const everyFrame = ['CLI-001', 'CLI-021', 'CLI-017'];
  for (const r of results)
    expect([...(r.checked ?? [])].filter((id) => !everyFrame.includes(id)).sort(), r.id).to.deep.equal(
      r.requirements.filter((id) => !everyFrame.includes(id) && inProfile(registry.get(id)!, profile)).sort(),
    );
  expect(results.some((r) => r.checked?.includes('CLI-001'))).to.equal(true);
}

describe('conformance client role', function () {
  this.timeout(300_000);
  const ANSWERS = ['agent-streams-and-replies', 'agent-answers-every-event', 'agent-handles-invalid-event-id'];

  it('has a scenario for every client rule, for both roles where it applies to both; the real-time ones marked slow; each naming known CLI requirements', () => {
    const ids = CLIENT_SCENARIOS.map((s) => s.id);
    for (const role of ['app', 'agent']) {
      for (const rule of [
        'reconnect-backoff',
        'reconnects-after-close',
        'refused-for-good',
        'ignores-unknown',
        'heartbeat',
        'dead-connection',
        'backoff-cap',
      ])
        expect(ids).to.include(`${role}-${rule}`);
    }
    expect(ids).to.include.members([
      ...ANSWERS,
      'agent-connection-replaced',
      'app-handshake',
      'app-sends-valid-event',
      'app-error-agent-offline',
      'app-error-rate-limit-exceeded',
    ]);
    expect(
      CLIENT_SCENARIOS.filter((s) => s.slow)
        .map((s) => s.id)
        .sort(),
    ).to.deep.equal([
      'agent-backoff-cap',
      'agent-dead-connection',
      'agent-heartbeat',
      'app-backoff-cap',
      'app-dead-connection',
      'app-heartbeat',
    ]);
    const covered = new Set(CLIENT_SCENARIOS.flatMap((s) => s.requirements));
    const clientRules = [...loadRequirements().keys()].filter((id) => id.startsWith('CLI-'));
    expect(
      clientRules.filter((id) => !covered.has(id)),
      'client rules without a scenario',
    ).to.deep.equal([]);
    const requirements = loadRequirements();
    for (const s of CLIENT_SCENARIOS)
      for (const id of s.requirements) expect(requirements.has(id), `${s.id}: ${id}`).to.equal(true);
  });

  it("sends an app, in the protocol profile, only the protocol's error codes; our decisions' only with --profile bridge; an extension's never", () => {
    const codeOf = (id: string) =>
      id
        .replace(/^app-error-/, '')
        .replace(/-/g, '_')
        .toUpperCase();
    const errorCodes = (profile: Profile) =>
      clientScenarios('app', profile, loadRequirements())
        .filter((s) => s.id.startsWith('app-error-'))
        .map((s) => codeOf(s.id))
        .sort();
    // The protocol's table of errors sent to apps (spec/protocol.md §7.1), less INVALID_JSON (about a frame).
    const protocol = [
      'AGENT_ERROR',
      'AGENT_NOT_FOUND',
      'AGENT_OFFLINE',
      'AGENT_TIMEOUT',
      'INVALID_AGENT_ID',
      'INVALID_THREAD_ID',
      'PAYLOAD_TOO_LARGE',
      'PERMISSION_DENIED',
      'RATE_LIMIT_EXCEEDED',
    ];
    expect(errorCodes('protocol')).to.deep.equal(protocol);
    expect(errorCodes('bridge')).to.deep.equal(
      [...protocol, 'REPLY_TOO_LARGE', 'SHUTTING_DOWN', 'TOO_MANY_EVENTS'].sort(),
    );
    expect(ERRORS.RESUME_GAP.origin).to.equal('extension');
    // Every code the catalogue lets the bridge send an app about its event is accounted for.
    expect(APP_EVENT_ERRORS.every((c) => ERRORS[c].scope === 'event')).to.equal(true);
    expect(APP_EVENT_ERRORS).to.include.members(errorCodes('bridge') as typeof APP_EVENT_ERRORS);
  });

  for (const role of ['agent', 'app'] as const) {
    const example = `examples/conformance-${role}.ts`;
    it(`our ${role === 'agent' ? 'agent connector' : 'app client'} (${example}) passes every ${role} scenario, slow ones included, at time scale ${SCALE}, every check judged and seen to hold (bridge profile)`, async () => {
      const results = await runRole(role, `node --import tsx ${example}`, { timeScale: SCALE });
      expect(
        results.every((r) => r.status === 'passed' && !r.warnings),
        explain(results),
      ).to.equal(true);
      expect(results.map((r) => r.id)).to.include.members([`${role}-heartbeat`, `${role}-backoff-cap`]);
      expectAllChecked(results, 'bridge');
    });
  }

  it('a silent agent fails every scenario that sends it events, on CLI-007 (never silence), called silent', async () => {
    const results = await runRole('agent', 'node --import tsx test/conformance/broken-clients/silent-agent.ts', {
      ids: ANSWERS,
      answerTimeoutMs: 3_000,
    });
    expect(statuses(results), explain(results)).to.deep.equal({
      'agent-streams-and-replies': 'failed',
      'agent-answers-every-event': 'failed',
      'agent-handles-invalid-event-id': 'failed',
    });
    for (const r of results)
      expect(r.reason).to.match(/^silent: (no reply or error|nothing) for event \S+ within 3\.0 s/);
    for (const r of results) expect(r.failures).to.have.length(1);
    expect(failedRequirements(results)).to.deep.equal(['CLI-007']);
  });

  it('a slow agent (answers after the answer window, before the hard limit) passes, with a CLI-007 warning naming the time and the window', async () => {
    const results = await runRole('agent', 'node --import tsx test/conformance/broken-clients/slow-agent.ts', {
      ids: ['agent-answers-every-event', 'agent-handles-invalid-event-id'],
      answerWindowMs: 500,
      answerTimeoutMs: 5_000,
      env: { SLOW_AGENT_DELAY_MS: '1500' },
    });
    expect(statuses(results), explain(results)).to.deep.equal({
      'agent-answers-every-event': 'passed',
      'agent-handles-invalid-event-id': 'passed',
    });
    for (const r of results) {
      expect(r.warnings?.length, r.id).to.be.greaterThan(0);
      for (const w of r.warnings!) {
        expect(w.requirement).to.equal('CLI-007');
        expect(w.reason).to.match(
          /^slow: the agent answered event \S+ after 1\.\d s, beyond the answer window of 0\.5 s$/,
        );
      }
    }
    expect(failedRequirements(results)).to.deep.equal([]);
  });

  it('an agent sending a 5000-byte token fails agent-streams-and-replies only, on CLI-006', async () => {
    const results = await runRole('agent', 'node --import tsx test/conformance/broken-clients/oversized-agent.ts', {
      ids: ANSWERS,
    });
    expect(statuses(results), explain(results)).to.deep.equal({
      'agent-streams-and-replies': 'failed',
      'agent-answers-every-event': 'passed',
      'agent-handles-invalid-event-id': 'passed',
    });
    expect(results[0]!.reason).to.match(/5000 UTF-8 bytes, over the limit of 4096/);
    expect(failedRequirements(results)).to.deep.equal(['CLI-006']);
  });

  it('an app reconnecting at once fails app-reconnect-backoff only, on CLI-004', async () => {
    const results = await runRole('app', 'node --import tsx test/conformance/broken-clients/no-backoff-app.ts', {
      ids: ['app-handshake', 'app-reconnect-backoff'],
    });
    expect(statuses(results), explain(results)).to.deep.equal({
      'app-handshake': 'passed',
      'app-reconnect-backoff': 'failed',
    });
    expect(results.find((r) => r.id === 'app-reconnect-backoff')!.reason).to.match(
      /measured reconnect delays \d+ ms; expected 750–1250 ms/,
    );
    expect(failedRequirements(results)).to.deep.equal(['CLI-004']);
  });

  it('a one-shot app (exits 0 after its reply) is told the harness contract, not failed on heartbeat or reconnect rules', async () => {
    const results = await runRole('app', 'node --import tsx test/conformance/broken-clients/one-shot-app.ts', {
      ids: ['app-reconnects-after-close', 'app-dead-connection', 'app-error-agent-offline'],
      timeScale: SCALE,
    });
    for (const r of results) {
      expect(r.status, explain([r])).to.equal('errored');
      expect(r.harness).to.match(
        /^the client exited \(code 0\) before the scenario ended: the harness contract asks it to run until stopped \(SIGTERM\)/,
      );
      expect(r.failedRequirements).to.equal(undefined);
    }
    // What it did before it left held, and counts: its handshake.
    expect(results.find((r) => r.id === 'app-reconnects-after-close')!.checked).to.include('CLI-002');
    expect(failedRequirements(results)).to.deep.equal([]);
  });

  it('a client that ignores BRIDGE_TIME_SCALE is told so once, as a harness finding, not failed on CLI-004 or CLI-005', async () => {
    const command = (role: string) =>
      `node --import tsx test/conformance/broken-clients/minimal-client.ts --role ${role} --break ignore-scale`;
    const [backoff, heartbeat] = await Promise.all([
      runRole('agent', command('agent'), { ids: ['agent-reconnect-backoff'], timeScale: SCALE }),
      runRole('app', command('app'), { ids: ['app-dead-connection'], timeScale: SCALE }),
    ]);
    const results = [...backoff!, ...heartbeat!];
    for (const r of results) {
      expect(r.status, explain([r])).to.equal('errored');
      expect(r.harness).to.match(
        /^the client does not honour BRIDGE_TIME_SCALE=10: its first (reconnect delay|ping) came after \d+ ms, the unscaled (1000|30000) ms/,
      );
      expect(r.failedRequirements).to.equal(undefined);
      expect(r.checked ?? []).not.to.include.members(['CLI-004']);
    }
    expect(failedRequirements(results)).to.deep.equal([]);
  });
});
