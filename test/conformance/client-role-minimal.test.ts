// The client role against a client that shares no code with our SDKs: broken-clients/minimal-client.ts, written
// from the protocol with `ws` alone. Unbroken, it passes every scenario of both roles in both profiles (with
// symmetric ±20 % jitter on its backoff, so jitter either way is shown to pass); with --break RULE it breaks exactly
// one rule and must fail exactly the scenarios, and the requirements, that judge that rule. Each broken variant runs
// only the scenarios its rule concerns plus one that must still pass; the scenario runs of the file share a few
// slots, to keep the run short. Slow rules (heartbeat periods, the 60 s cap) run only with CONFORMANCE_SLOW=1.
import { expect } from 'chai';
import { runClientScenario, type ClientScenario } from '../../conformance/client/run.js';
import { CLIENT_SCENARIOS } from '../../conformance/client/scenarios.js';
import { judge, type ScenarioResult } from '../../conformance/results.js';
import { inProfile, loadRequirements, type Profile } from '../../conformance/scenario.js';

// Not npx tsx: every scenario starts the client, and npx costs two more processes and half a second of CPU a start.
const CLIENT = 'node --import tsx test/conformance/broken-clients/minimal-client.ts';
const SLOW = process.env.CONFORMANCE_SLOW === '1';
type Role = 'app' | 'agent';

function scenariosById(ids: string[]): ClientScenario[] {
  const found = ids.map((id) => CLIENT_SCENARIOS.find((s) => s.id === id));
  const missing = ids.filter((_, i) => !found[i]);
  if (missing.length) throw new Error(`no client scenario ${missing.join(', ')}`);
  return found as ClientScenario[];
}

/**
 * Every scenario run of this file takes one of SLOTS places, first come first served: each has a mock bridge and a
 * client process of its own and spends its time watching that client on real time, so several at once take a
 * fraction of the time. More would start clients faster than two cores load them and make their timers late,
 * and a late timer is a false failure (a backoff is judged within 750–1250 ms).
 */
const SLOTS = 6;
let free = SLOTS;
const waiting: (() => void)[] = [];
async function inSlot<T>(task: () => Promise<T>): Promise<T> {
  if (free === 0) await new Promise<void>((resolve) => waiting.push(resolve));
  else free--;
  try {
    return await task();
  } finally {
    const wake = waiting.shift();
    if (wake) wake();
    else free++;
  }
}

/** Runs the scenarios against the minimal client (`--role`, optional `--break`), each in a slot. */
function run(scenarios: ClientScenario[], o: { rule?: string; profile: Profile }): Promise<ScenarioResult[]> {
  return Promise.all(
    scenarios.map((s) =>
      inSlot(async () => {
        const command = `${CLIENT} --role ${s.role}${o.rule ? ` --break ${o.rule}` : ''}`;
        const outcome = await runClientScenario(s, { command, profile: o.profile });
        return { id: s.id, file: 'client/scenarios.ts', title: s.title, requirements: s.requirements, ...outcome };
      }),
    ),
  );
}

/** The verdicts of the CLI requirements of the profile that the scenarios run check. */
function verdicts(results: ScenarioResult[], profile: Profile) {
  const requirements = [...loadRequirements().values()].filter(
    (r) => r.id.startsWith('CLI-') && inProfile(r, profile) && results.some((s) => s.requirements.includes(r.id)),
  );
  return judge(requirements, results, new Set());
}
/** Requirements a check of which failed: a MUST's verdict is failed, a SHOULD's a warning (graded, not failed). */
const failedRequirements = (results: ScenarioResult[], profile: Profile) =>
  verdicts(results, profile)
    .requirements.filter((r) => r.failures?.length)
    .map((r) => r.id)
    .sort();
const statuses = (results: ScenarioResult[]) => Object.fromEntries(results.map((r) => [r.id, r.status]));
const explain = (results: ScenarioResult[]) =>
  results
    .map(
      (r) =>
        `${r.id}: ${r.status} in ${r.durationMs} ms${r.reason ? ` — ${r.reason}` : ''}${r.failedRequirements ? ` [${r.failedRequirements.join(', ')}]` : ''}`,
    )
    .join('\n');

/** One broken variant: the scenarios it must fail (with the requirements each names), and one it must still pass. */
interface Variant {
  rule: string;
  /** By profile: a rule of our decisions fails only in the bridge profile. */
  fails: Partial<Record<Profile, Record<string, string[]>>>;
  passes: string[];
  slow?: boolean;
  /** What the first failure's reason must say. */
  reason?: RegExp;
}

const VARIANTS: Variant[] = [
  {
    rule: 'no-backoff',
    fails: { bridge: { 'agent-reconnect-backoff': ['CLI-004'] } },
    passes: ['agent-reconnects-after-close'],
    reason: /measured reconnect delays \d+ ms; expected 750–1250 ms/,
  },
  {
    rule: 'hammer-refused',
    fails: { bridge: { 'app-refused-for-good': ['CLI-012'] } },
    passes: ['app-reconnect-backoff'],
    reason: /made \d+ handshakes in 10 s although its token was refused/,
  },
  {
    rule: 'no-reconnect',
    fails: { bridge: { 'app-reconnects-after-close': ['CLI-011'], 'agent-reconnects-after-close': ['CLI-011'] } },
    passes: ['app-reconnect-backoff'],
    reason: /did not connect again after the bridge closed its connection with 1001/,
  },
  // CLI-015 is our decision: in the protocol profile the same client passes.
  {
    rule: 'strict-types',
    fails: { bridge: { 'agent-ignores-unknown': ['CLI-015'], 'app-ignores-unknown': ['CLI-015'] }, protocol: {} },
    passes: ['agent-streams-and-replies'],
  },
  {
    rule: 'token-in-payload',
    fails: { bridge: { 'app-sends-valid-event': ['CLI-021'], 'agent-streams-and-replies': ['CLI-021'] } },
    passes: ['agent-connection-replaced'],
    reason: /sent its token in a/,
  },
  {
    rule: 'close-on-error',
    fails: { bridge: { 'app-error-agent-offline': ['CLI-018'], 'app-error-rate-limit-exceeded': ['CLI-018'] } },
    passes: ['app-sends-valid-event'],
    reason: /the app closed its connection after AGENT_OFFLINE for its event/,
  },
  // CLI-019 (not within 1 s) is our decision; CLI-020 (retry_after_seconds) is the protocol's.
  {
    rule: 'resend-at-once',
    fails: {
      bridge: { 'app-error-agent-offline': ['CLI-019'], 'app-error-rate-limit-exceeded': ['CLI-020'] },
      protocol: { 'app-error-rate-limit-exceeded': ['CLI-020'] },
    },
    passes: ['app-sends-valid-event'],
  },
  {
    rule: 'fight-replacement',
    fails: { bridge: { 'agent-connection-replaced': ['CLI-016'] }, protocol: {} },
    passes: ['agent-reconnects-after-close'],
    reason: /connected again 1 time\(s\) within 5 s of CONNECTION_REPLACED/,
  },
  // Its second connection stays open with the first from the start to the end of each scenario.
  {
    rule: 'two-connections',
    fails: { bridge: { 'agent-answers-every-event': ['CLI-017'], 'agent-streams-and-replies': ['CLI-017'] } },
    passes: ['agent-refused-for-good'],
    reason: /connections open at once/,
  },
  {
    rule: 'forget-after-reconnect',
    fails: { bridge: { 'agent-reconnects-after-close': ['CLI-014'] } },
    passes: ['agent-answers-every-event'],
    reason: /silent: no reply or error for event/,
  },
  {
    rule: 'big-fragment',
    fails: { bridge: { 'agent-streams-and-replies': ['CLI-006'] } },
    passes: ['agent-answers-every-event'],
    reason: /UTF-8 bytes, over the limit of 4096/,
  },
  // Slow: real 30 s heartbeats and the 60 s cap.
  {
    rule: 'no-ping',
    slow: true,
    fails: { bridge: { 'agent-heartbeat': ['CLI-005'], 'app-dead-connection': ['CLI-005'] } },
    passes: ['agent-answers-every-event'],
    reason: /sent no ping between 25 and 35 s/,
  },
  {
    rule: 'ignore-dead',
    slow: true,
    fails: { bridge: { 'app-dead-connection': ['CLI-010'] } },
    passes: ['app-heartbeat'],
    reason: /did not reconnect after its ping got no pong/,
  },
  {
    rule: 'no-cap',
    slow: true,
    fails: { bridge: { 'agent-backoff-cap': ['CLI-022'] } },
    passes: ['agent-reconnect-backoff'],
  },
  // CLI-013 is our decision: in the protocol profile the same client passes.
  {
    rule: 'no-reset',
    slow: true,
    fails: { bridge: { 'agent-heartbeat': ['CLI-013'] }, protocol: {} },
    passes: ['agent-dead-connection'],
    reason: /backoff should start again at 1000 ms/,
  },
];

describe('conformance client role: an independent minimal client (broken-clients/minimal-client.ts)', function () {
  this.timeout(900_000);
  // A broken variant's runs, started in the background when first asked for; its test waits for them.
  const pending = new Map<string, Promise<Map<Profile, ScenarioResult[]>>>();
  function variantRuns(v: Variant): Promise<Map<Profile, ScenarioResult[]>> {
    let work = pending.get(v.rule);
    if (!work) {
      work = (async () => {
        const byProfile = new Map<Profile, ScenarioResult[]>();
        for (const [profile, fails] of Object.entries(v.fails) as [Profile, Record<string, string[]>][]) {
          const ids = [...new Set([...Object.keys(v.fails.bridge ?? {}), ...Object.keys(fails), ...v.passes])];
          byProfile.set(profile, await run(scenariosById(ids), { rule: v.rule, profile }));
        }
        return byProfile;
      })();
      work.catch(() => {}); // reported by its test
      pending.set(v.rule, work);
    }
    return work;
  }

  it('passes every scenario of both roles that is not slow, in both profiles', async () => {
    // The broken variants start now too, sharing the slots with this run: their tests below find them done.
    for (const v of VARIANTS.filter((x) => !x.slow || SLOW)) void variantRuns(v);
    const started = performance.now();
    const lanes = (['protocol', 'bridge'] as const).flatMap((profile) =>
      (['app', 'agent'] as Role[]).map(async (role) => ({
        profile,
        // The cancel profile's scenarios skip it (it does not opt in): client-role-cancel.test.ts.
        results: await run(
          CLIENT_SCENARIOS.filter((s) => s.role === role && !s.slow && !s.profiles?.includes('cancel')),
          { profile },
        ),
      })),
    );
    for (const { profile, results } of await Promise.all(lanes)) {
      expect(
        results.every((r) => r.status === 'passed'),
        `${profile} profile:\n${explain(results)}`,
      ).to.equal(true);
      const judged = verdicts(results, profile);
      expect(
        judged.requirements.filter((r) => r.verdict !== 'passed').map((r) => `${r.id} ${r.verdict}`),
        profile,
      ).to.deep.equal([]);
    }
    const all = (await Promise.all(lanes)).map((l) => l.results);
    // The scenarios of the design (CLI-004 … CLI-022) are there: a rename or a lost scenario is noticed here.
    const ids = all.flat().map((r) => r.id);
    for (const id of [
      'app-reconnects-after-close',
      'agent-reconnects-after-close',
      'app-refused-for-good',
      'agent-ignores-unknown',
      'agent-connection-replaced',
      'app-error-rate-limit-exceeded',
    ])
      expect(ids).to.include(id);
    console.log(
      `      ${ids.length / 2} scenarios × 2 profiles passed in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
  });

  it('passes the slow scenarios of both roles (slow: runs with CONFORMANCE_SLOW=1)', async function () {
    if (!SLOW) this.skip();
    const results = await run(
      CLIENT_SCENARIOS.filter((s) => s.slow),
      { profile: 'bridge' },
    );
    expect(results.map((r) => r.id)).to.have.members([
      'app-heartbeat',
      'app-dead-connection',
      'app-backoff-cap',
      'agent-heartbeat',
      'agent-dead-connection',
      'agent-backoff-cap',
    ]);
    expect(
      results.every((r) => r.status === 'passed'),
      explain(results),
    ).to.equal(true);
    expect(failedRequirements(results, 'bridge')).to.deep.equal([]);
  });

  for (const role of ['app', 'agent'] as Role[]) {
    it(`--break exit-at-once (${role}) is told the harness contract within seconds, naming the exit code and stderr, blaming no requirement`, async () => {
      const first = CLIENT_SCENARIOS.find((s) => s.role === role && !s.slow)!;
      const [result] = await run([first], { rule: 'exit-at-once', profile: 'bridge' });
      expect(result!.status, explain([result!])).to.equal('errored');
      expect(result!.durationMs, 'not the 30 s connect timeout').to.be.below(10_000);
      expect(result!.harness)
        .to.match(/^the client exited \(code 3; stderr: .*minimal-client: giving up on purpose/)
        .and.to.match(/the harness contract asks it to run until stopped \(SIGTERM\)$/);
      expect(result!.failedRequirements).to.equal(undefined);
    });
  }

  describe('each --break RULE fails exactly the scenarios and requirements of its rule', function () {
    for (const v of VARIANTS) {
      const what = Object.entries(v.fails)
        .map(
          ([profile, fails]) =>
            `${profile}: ${
              Object.entries(fails)
                .map(([id, reqs]) => `${id} on ${reqs.join(',')}`)
                .join('; ') || 'nothing'
            }`,
        )
        .join(' | ');
      it(`--break ${v.rule}${v.slow ? ' (slow: runs with CONFORMANCE_SLOW=1)' : ''} fails ${what}; passes ${v.passes.join(', ')}`, async function () {
        if (v.slow && !SLOW) this.skip();
        const byProfile = await variantRuns(v);
        for (const [profile, results] of byProfile) {
          const fails = v.fails[profile]!;
          const want = Object.fromEntries(results.map((r) => [r.id, r.id in fails ? 'failed' : 'passed']));
          expect(statuses(results), `${profile} profile:\n${explain(results)}`).to.deep.equal(want);
          for (const r of results.filter((x) => x.id in fails))
            expect(r.failedRequirements, `${profile}, ${r.id}: ${r.reason}`).to.deep.equal(fails[r.id]);
          expect(failedRequirements(results, profile)).to.deep.equal([...new Set(Object.values(fails).flat())].sort());
          const first = results.find((r) => r.id in fails);
          if (v.reason && first) expect(first.reason).to.match(v.reason);
        }
      });
    }
  });
});
