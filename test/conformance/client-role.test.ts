// The client role, end to end: our two SDKs' example clients pass every scenario of their role that is not opt-in,
// and deliberately broken clients (broken-clients/) fail exactly the scenarios, and the requirements, they break.
// Each client is a real command (`node --import tsx …`; not npx tsx, which costs two more processes and half a second
// of CPU a start, and every scenario starts one) run against the mock bridge, as a third party's would be.
import { expect } from 'chai';
import { runClientScenario } from '../../conformance/client/run.js';
import { CLIENT_SCENARIOS } from '../../conformance/client/scenarios.js';
import { judge, type ScenarioResult } from '../../conformance/results.js';
import { loadRequirements } from '../../conformance/scenario.js';

/**
 * Runs the role's fast scenarios (or only `ids`) against `command`, in the bridge profile (every check judged), three
 * at a time: each has a mock bridge and a client of its own, and most of its time is spent watching that client on
 * real time (seconds of it: a backoff, a connection left alone), so three at once take a third of the time.
 */
async function runRole(role: 'app' | 'agent', command: string, ids?: string[]): Promise<ScenarioResult[]> {
  const scenarios = CLIENT_SCENARIOS.filter((c) => c.role === role && !c.slow && (!ids || ids.includes(c.id)));
  const results: ScenarioResult[] = new Array(scenarios.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < scenarios.length; i = next++) {
      const s = scenarios[i]!;
      const outcome = await runClientScenario(s, { command, profile: 'bridge' });
      results[i] = { id: s.id, file: 'client/scenarios.ts', title: s.title, requirements: s.requirements, ...outcome };
    }
  };
  await Promise.all(Array.from({ length: 3 }, lane));
  return results;
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
  results.map((r) => `${r.id}: ${r.status}${r.reason ? ` — ${r.reason}` : ''}`).join('\n');

describe('conformance client role', function () {
  this.timeout(300_000);
  const ANSWERS = ['agent-streams-and-replies', 'agent-answers-every-event', 'agent-handles-invalid-event-id'];

  it('has a scenario for every client rule, for both roles where it applies to both; the real-time ones opt-in; each naming known CLI requirements', () => {
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

  it('our agent connector (examples/conformance-agent.ts) passes every fast agent scenario, every check judged (bridge profile)', async () => {
    const results = await runRole('agent', 'node --import tsx examples/conformance-agent.ts');
    expect(
      results.every((r) => r.status === 'passed'),
      explain(results),
    ).to.equal(true);
  });

  it('our app client (examples/conformance-app.ts) passes every fast app scenario, every check judged (bridge profile)', async () => {
    const results = await runRole('app', 'node --import tsx examples/conformance-app.ts');
    expect(
      results.every((r) => r.status === 'passed'),
      explain(results),
    ).to.equal(true);
    expect(results.map((r) => r.id)).to.include('app-reconnect-backoff');
  });

  it('a silent agent fails every scenario that sends it events, on CLI-007 (never silence)', async () => {
    const results = await runRole(
      'agent',
      'node --import tsx test/conformance/broken-clients/silent-agent.ts',
      ANSWERS,
    );
    expect(statuses(results), explain(results)).to.deep.equal({
      'agent-streams-and-replies': 'failed',
      'agent-answers-every-event': 'failed',
      'agent-handles-invalid-event-id': 'failed',
    });
    for (const r of results) expect(r.reason).to.match(/sent (no reply or error|nothing) for event/);
    expect(failedRequirements(results)).to.deep.equal(['CLI-007']);
  });

  it('an agent sending a 5000-byte token fails agent-streams-and-replies only, on CLI-006', async () => {
    const results = await runRole(
      'agent',
      'node --import tsx test/conformance/broken-clients/oversized-agent.ts',
      ANSWERS,
    );
    expect(statuses(results), explain(results)).to.deep.equal({
      'agent-streams-and-replies': 'failed',
      'agent-answers-every-event': 'passed',
      'agent-handles-invalid-event-id': 'passed',
    });
    expect(results[0]!.reason).to.match(/5000 UTF-8 bytes, over the limit of 4096/);
    expect(failedRequirements(results)).to.deep.equal(['CLI-006']);
  });

  it('an app reconnecting at once fails app-reconnect-backoff only, on CLI-004', async () => {
    const results = await runRole('app', 'node --import tsx test/conformance/broken-clients/no-backoff-app.ts', [
      'app-handshake',
      'app-sends-valid-event',
      'app-reconnect-backoff',
    ]);
    expect(statuses(results), explain(results)).to.deep.equal({
      'app-handshake': 'passed',
      'app-sends-valid-event': 'passed',
      'app-reconnect-backoff': 'failed',
    });
    expect(results.find((r) => r.id === 'app-reconnect-backoff')!.reason).to.match(
      /measured reconnect delays \d+ ms; expected 750–1250 ms/,
    );
    expect(failedRequirements(results)).to.deep.equal(['CLI-004']);
  });
});
