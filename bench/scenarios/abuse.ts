// Scenario abuse: the worst single hostile clients against the production bridge, one attack per fresh bridge (so
// each peak is its own). Per attack: the bridge's peak RSS (the kernel's VmHWM) and V8 heap (its /metrics, once a
// second), whether it stayed up, whether a well-behaved canary pair (bench/load/canary.ts, its own process, source
// address and organization) kept getting replies and how fast against its own quiet phase on the same bridge just
// before the attack, whether the door stayed open (/healthz, /readyz and new connections of the canary's
// organization, probed throughout: bench/load/probes.ts), what the offender got back by code, and the attack's own
// figures (rows written, sessions kept, log bytes, connections admitted, bytes kept for resumes). The bridge logs at
// info, its default, so that the log an attack makes is the one a deployment would store.
//
// Memory ceiling: 1.5 GiB, RSS and V8 heap. What one client can make the bridge hold by its defaults is about 0.35
// GiB (1000 events in flight x 64 KB payload, 64 MiB of kept streamed text per agent, 8 MiB send buffers, ~20 KB
// per connection x 19k connections, ~100 MiB at rest); 1.5 GiB is four times that and well under the ~4 GiB V8 heap
// limit of this machine, where the process would die. An attack past it has found memory the bounds do not cover.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AbuseConfig, AbuseResult, Attack } from '../load/abuse.js';
import type { CanaryConfig, CanaryPhase, CanaryResult } from '../load/canary.js';
import { procCpuSeconds, procRssKb } from '../load/common.js';
import type { Outcomes } from '../load/probes.js';
import { openFilesLimit, provision, startBridge, startGenerator, stop, type Server } from '../processes.js';
import { type Table, type Target } from '../report.js';
import type { AdminClient } from '../../src/cli/admin-client.js';
import { listSessions, metricsOf, peakRssKb, rowsOf, watch } from './abuse-watch.js';
import { describeAttack, figuresOf, mib, SPECS, type AttackRun, type Spec } from './abuse-specs.js';
import type { Settings } from './settings.js';

export const ATTACKS = Object.keys(SPECS) as Attack[];
const CEILING_KB = 1.5 * 2 ** 20;
const CANARY_P99_MS = 1000;
const CANARY_ADDRESS = '127.0.0.2';
const PROBE_ADDRESS = '127.0.0.4';
/** Agents registered at once when an attack needs a large directory. */
const REGISTER_CONCURRENCY = 8;

/** `count` agents with names and descriptions as long as the admin API takes, `REGISTER_CONCURRENCY` at a time. */
async function registerDirectory(admin: AdminClient, orgId: string, count: number): Promise<void> {
  const description = 'Answers questions about one subject at length, cites its sources and asks back when unsure. '
    .repeat(12)
    .slice(0, 1024);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++)
      await admin.createAgent(orgId, {
        name: `Directory agent ${String(i).padStart(5, '0')} `.padEnd(128, 'n'),
        description,
      });
  };
  await Promise.all(Array.from({ length: REGISTER_CONCURRENCY }, worker));
}

const heapKb = (m: Record<string, number> | null) =>
  m?.nodejs_heap_size_used_bytes === undefined ? null : Math.round(m.nodejs_heap_size_used_bytes / 1024);
const secondsSince = (t0: number) => Number(((performance.now() - t0) / 1000).toFixed(1));
const load = () => loadavg().map((x) => Number(x.toFixed(2)));

async function runAttack(attack: Attack, spec: Spec, s: Settings, filesLimit: number): Promise<AttackRun> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-abuse-'));
  let bridge: (Server & { admin: AdminClient }) | undefined;
  try {
    // The bridge's own defaults (an empty setting is unset), F3's share of fragments included: an attack meets the
    // bounds a deployment has. An attack's spec turns off what it must (the rate limit for a flood of events).
    const env = { LOG_LEVEL: 'info', FRAGMENTS_PER_ORG_PER_SECOND: '', ...spec.env };
    bridge = await startBridge(dir, s.profileDir, env);
    // The canary pair and the probes' app and agent in an organization of their own, the offender in another: a
    // bound per organization counts them apart, as it would two customers.
    const canaryOrg = await provision(bridge.admin, 2, 2, 'Canary');
    const offenderOrg = await provision(
      bridge.admin,
      1,
      typeof spec.apps === 'number' ? spec.apps : spec.apps(s.quick),
      'Offender',
    );
    const setup = { directory_agents: 0, directory_s: 0 };
    if (spec.directory) {
      const t = performance.now();
      setup.directory_agents = spec.directory(s.quick);
      console.error(`  ${attack}: registering ${setup.directory_agents} agents in the offender's organization...`);
      await registerDirectory(bridge.admin, offenderOrg.org_id, setup.directory_agents);
      setup.directory_s = secondsSince(t);
    }
    const canaryCfg: CanaryConfig = {
      scenario: 'canary',
      url: bridge.url,
      app: canaryOrg.apps[0]!,
      agent: canaryOrg.agents[0]!,
      eventsPerS: 10,
      localAddress: CANARY_ADDRESS,
      probe: { app: canaryOrg.apps[1]!, agent: canaryOrg.agents[1]!, localAddress: PROBE_ADDRESS },
    };
    // The canary and the offender start together (a generator takes about a second to start); the quiet phase
    // starts with the canary's first reply, and the attack once the quiet phase is over.
    const canaryUp = lineSeen();
    const canary = startGenerator<CanaryResult>(canaryCfg, canaryUp.see('READY'));
    const cfg: AbuseConfig = {
      scenario: 'abuse',
      attack,
      url: bridge.url,
      apps: offenderOrg.apps,
      agent: offenderOrg.agents[0]!,
      localAddresses: ['127.0.0.1'],
      waitForGo: true,
      ...spec.scale(s.quick, filesLimit),
    };
    const offenderUp = lineSeen();
    const offenderRun = startGenerator<AbuseResult>(cfg, offenderUp.see('WAITING'));
    await Promise.race([Promise.all([canaryUp.seen, offenderUp.seen]), canary.result, offenderRun.result]);
    const quietS = s.quick ? 1 : 10;
    await sleep(quietS * 1000);
    const before = { rss_kb: procRssKb(bridge.pid), heap_used_kb: heapKb(await metricsOf(bridge)) };
    const loadBefore = load();
    const watcher = watch(bridge);
    const logBefore = bridge.logBytes();
    console.error(`  ${attack}: ${describeAttack(attack, cfg)}...`);
    const cpu0 = procCpuSeconds(bridge.pid);
    const t0 = performance.now();
    canary.go(); // the canary's attack phase
    offenderRun.go();
    let offender: AbuseResult | null = null;
    let failure: string | null = null;
    try {
      offender = await offenderRun.result;
    } catch (err) {
      failure = (err as Error).message.slice(0, 2000);
    }
    const attackS = secondsSince(t0);
    const cpu1 = procCpuSeconds(bridge.pid);
    const cpuPct = cpu0 !== null && cpu1 !== null && attackS > 0 ? Math.round(((cpu1 - cpu0) / attackS) * 100) : null;
    const loadAfter = load();
    canary.go(); // its after phase: what the attack left behind settles while the canary still runs
    await sleep(s.quick ? 300 : 1000);
    canary.stop();
    const canaryResult = await canary.result.catch(() => null);
    const w = await watcher.stop();
    const up = bridge.child.exitCode === null && bridge.child.signalCode === null;
    const peak = peakRssKb(bridge.pid);
    let rows: AttackRun['rows'] = null;
    let listing: AttackRun['sessions_listing'] = null;
    let metricsAfter: Record<string, number> | null = null;
    const appId = offenderOrg.apps[0]!.app_id;
    if (up) {
      await bridge.admin.events({ limit: '1' }).catch(() => {}); // the admin read flushes the event log first
      metricsAfter = await metricsOf(bridge);
      if (attack === 'sessions')
        listing = await listSessions(bridge.admin, appId, s.quick ? 10_000 : 60_000).catch(() => null);
    }
    rows = await rowsOf(join(dir, 'bridge.sqlite'), appId);
    const logBytes = bridge.logBytes() - logBefore;
    const exit = up ? null : `exit ${bridge.child.exitCode ?? bridge.child.signalCode}: ${bridge.logs().slice(-1500)}`;
    return {
      attack,
      title: spec.title,
      env,
      stayed_up: up,
      exit,
      peak_rss_kb: peak ?? w.max_rss_kb,
      before,
      load_before: loadBefore,
      load_after: loadAfter,
      quiet_s: quietS,
      attack_s: attackS,
      bridge_cpu_pct: cpuPct,
      setup,
      watch: w,
      canary: canaryResult,
      offender,
      offender_failure: failure,
      log_bytes: logBytes,
      log_tail: bridge.logs().split('\n').slice(-4),
      rows,
      sessions_listing: listing,
      metrics_after: metricsAfter,
    };
  } finally {
    if (bridge) await stop(bridge.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A promise that a generator printed a given line. */
function lineSeen() {
  let resolve!: () => void;
  const seen = new Promise<void>((r) => (resolve = r));
  return { seen, see: (want: string) => (line: string) => void (line === want && resolve()) };
}

const codesText = (codes: Record<string, number> | undefined) =>
  Object.entries(codes ?? {})
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} x${v}`)
    .join(', ') || 'nothing';

/** Probe outcomes as `200 x40, timeout x3`; a dash when none was probed. */
const outcomesText = (o: Outcomes | undefined) => (o && Object.keys(o).length ? codesText(o) : null);

const phaseOf = (r: AttackRun, phase: 'quiet' | 'attack'): CanaryPhase | undefined => r.canary?.phases[phase];
const p99 = (p: CanaryPhase | undefined) => (p && p.latency_ms.samples ? Number(p.latency_ms.p99.toFixed(1)) : null);
const ceilingMet = (kb: number | null) => kb !== null && kb <= CEILING_KB;

function verdict(r: AttackRun): { met: boolean; measured: string } {
  const c = phaseOf(r, 'attack');
  const replied = c ? c.replies / Math.max(1, c.sent) : 0;
  const memOk =
    ceilingMet(r.peak_rss_kb) && (r.watch.max_heap_used_kb === null || ceilingMet(r.watch.max_heap_used_kb));
  const canaryOk = !!c && replied >= 0.99 && c.latency_ms.p99 <= CANARY_P99_MS;
  const quiet = p99(phaseOf(r, 'quiet'));
  const measured = `${r.stayed_up ? 'up' : 'DIED'}, peak RSS ${mib(r.peak_rss_kb)} MiB, peak heap ${mib(r.watch.max_heap_used_kb)} MiB, canary ${c ? `${c.replies}/${c.sent} replied, p99 ${c.latency_ms.p99} ms (quiet ${quiet ?? '?'} ms)` : 'failed'}`;
  return { met: r.stayed_up && memOk && canaryOk, measured };
}

/** The door during the attack: every /healthz and /readyz 200, every new connection of the canary's organization served. */
function doorVerdict(r: AttackRun): { met: boolean | null; measured: string } {
  const p = r.canary?.probes.attack;
  if (!p) return { met: null, measured: 'not probed (the attack was over before a probe)' };
  // A probe kind with no sample in a short attack is no failure; none at all says nothing.
  const only = (o: Outcomes, ok: string) => Object.keys(o).every((k) => k === ok);
  const probed = [p.healthz, p.readyz, p.new_app, p.new_agent].some((o) => Object.keys(o).length > 0);
  const met = !probed
    ? null
    : only(p.healthz, '200') && only(p.readyz, '200') && only(p.new_app, 'open') && only(p.new_agent, 'open');
  return {
    met,
    measured: `/healthz ${outcomesText(p.healthz) ?? '-'}; /readyz ${outcomesText(p.readyz) ?? '-'}; new app ${outcomesText(p.new_app) ?? '-'}; new agent ${outcomesText(p.new_agent) ?? '-'}`,
  };
}

export async function abuse(s: Settings) {
  const attacks = s.attacks ?? ATTACKS;
  const filesLimit = openFilesLimit();
  console.error(
    `Scenario abuse: ${attacks.length} attacks, each on a fresh bridge (LOG_LEVEL=info), a canary pair at 10 events/s in another organization, quiet ${s.quick ? 1 : 10} s first`,
  );
  const runs: AttackRun[] = [];
  for (const a of attacks) runs.push(await runAttack(a, SPECS[a], s, filesLimit));
  const memory: Table = {
    title: `Scenario abuse: one hostile client per attack; memory ceiling ${CEILING_KB / 2 ** 20} GiB (RSS and V8 heap); heap from /metrics once a second (samples answered / asked)`,
    columns: [
      'attack',
      'bridge',
      'RSS before (MiB)',
      'peak RSS (MiB)',
      'heap before (MiB)',
      'peak heap (MiB)',
      '/metrics answered',
      'attack (s)',
      'bridge CPU (%)',
      'load 1 min (start/end)',
    ],
    rows: runs.map((r) => [
      r.title,
      r.stayed_up ? 'up' : 'DIED',
      mib(r.before.rss_kb),
      mib(r.peak_rss_kb),
      mib(r.before.heap_used_kb),
      mib(r.watch.max_heap_used_kb),
      `${r.watch.metrics_answered}/${r.watch.metrics_answered + r.watch.metrics_unanswered}`,
      r.attack_s,
      r.bridge_cpu_pct,
      `${r.load_before[0]}/${r.load_after[0]}`,
    ]),
  };
  const canary: Table = {
    title: `Scenario abuse: the canary (another organization, 10 events/s) in its quiet phase on the same bridge just before the attack, and during the attack`,
    columns: [
      'attack',
      'quiet replied/sent',
      'quiet p99 (ms)',
      'attack replied/sent',
      'attack p99 (ms)',
      'attack max (ms)',
      'p99 / quiet',
      'canary got',
    ],
    rows: runs.map((r) => {
      const q = phaseOf(r, 'quiet');
      const a = phaseOf(r, 'attack');
      const ratio = p99(q) && p99(a) !== null ? Number((p99(a)! / p99(q)!).toFixed(1)) : null;
      return [
        r.title,
        q ? `${q.replies}/${q.sent}` : 'failed',
        p99(q),
        a ? `${a.replies}/${a.sent}` : 'failed',
        p99(a),
        a ? Number(a.latency_ms.max.toFixed(1)) : null,
        ratio,
        r.canary ? codesText(r.canary.codes) : '-',
      ];
    }),
  };
  const door: Table = {
    title:
      "Scenario abuse: the door during the attack (each probe on a new TCP connection, 2 s timeout; new connections of the canary's organization, served = open 200 ms after the handshake)",
    columns: ['attack', '/healthz', '/readyz', 'new app connection', 'new agent connection'],
    rows: runs.map((r) => {
      const p = r.canary?.probes.attack;
      return [
        r.title,
        outcomesText(p?.healthz),
        outcomesText(p?.readyz),
        outcomesText(p?.new_app),
        outcomesText(p?.new_agent),
      ];
    }),
  };
  const offender: Table = {
    title: 'Scenario abuse: what each offender did and got back (error codes by count; close N = WebSocket close code)',
    columns: ['attack', 'sent', 'in (s)', 'offender got', 'log written (KiB)', 'event rows (offender)', 'figures'],
    rows: runs.map((r) => [
      r.title,
      r.offender?.sent ?? null,
      r.offender?.duration_s ?? null,
      r.offender ? codesText(r.offender.codes) : `generator failed: ${r.offender_failure?.split('\n')[0]}`,
      Math.round(r.log_bytes / 1024),
      r.rows?.events_of_app ?? null,
      figuresOf(r),
    ]),
  };
  const targets: Target[] = runs.flatMap((r) => {
    const v = verdict(r);
    const d = doorVerdict(r);
    return [
      {
        name: `abuse: ${r.title}`,
        goal: `bridge up, peak RSS and heap <= ${CEILING_KB / 2 ** 20} GiB, canary >= 99% replied with p99 <= ${CANARY_P99_MS} ms during the attack`,
        measured: v.measured,
        met: v.met,
      },
      {
        name: `abuse door: ${r.title}`,
        goal: '/healthz and /readyz 200, new app and agent connections of another organization served, during the attack',
        measured: d.measured,
        met: d.met,
      },
    ];
  });
  const errors = runs.filter((r) => r.offender_failure || !r.canary).length;
  return {
    json: { ceiling_kb: CEILING_KB, canary_p99_limit_ms: CANARY_P99_MS, attacks: runs },
    tables: [memory, canary, door, offender],
    targets,
    errors,
  };
}
