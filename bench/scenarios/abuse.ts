// Scenario abuse: the worst single hostile clients against the production bridge, one attack per fresh bridge (so
// each peak is its own). Per attack: the bridge's peak RSS (the kernel's VmHWM) and V8 heap (its /metrics, once a
// second), whether it stayed up, whether a well-behaved canary pair (bench/load/canary.ts, its own process and
// source address) kept getting replies and how fast, what the offender got back by code, and the attack's own
// figures (rows written, sessions kept, log bytes, connections admitted). The bridge logs at info, its default, so
// that the log an attack makes is the one a deployment would store.
//
// Memory ceiling: 1.5 GiB RSS. What one client can make the bridge hold by its defaults is about 0.35 GiB (1000
// events in flight x 64 KB payload, 64 MiB of kept streamed text per agent, 8 MiB send buffers, ~20 KB per
// connection x 19k connections, ~100 MiB at rest); 1.5 GiB is four times that and well under the ~4 GiB V8 heap
// limit of this machine, where the process would die. An attack past it has found memory the bounds do not cover.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AbuseConfig, AbuseResult, Attack } from '../load/abuse.js';
import type { CanaryConfig, CanaryResult } from '../load/canary.js';
import { openFilesLimit, provision, startBridge, startGenerator, stop, type Server } from '../processes.js';
import { type Table, type Target } from '../report.js';
import type { AdminClient } from '../../src/cli/admin-client.js';
import { listSessions, metricsOf, peakRssKb, rowsOf, watch, type Watch } from './abuse-watch.js';
import { describeAttack, figuresOf, mib, SPECS, type Spec } from './abuse-specs.js';
import type { Settings } from './settings.js';

export const ATTACKS = Object.keys(SPECS) as Attack[];
const CEILING_KB = 1.5 * 2 ** 20;
const CANARY_P99_MS = 1000;
const CANARY_ADDRESS = '127.0.0.2';

export interface AttackRun {
  attack: Attack;
  title: string;
  env: Record<string, string>;
  stayed_up: boolean;
  exit: string | null;
  peak_rss_kb: number | null;
  watch: Watch;
  canary: CanaryResult | null;
  offender: AbuseResult | null;
  offender_failure: string | null;
  log_bytes: number;
  /** The last lines the bridge wrote: what the log bytes are made of. */
  log_tail: string[];
  rows: Awaited<ReturnType<typeof rowsOf>>;
  sessions_listing: Awaited<ReturnType<typeof listSessions>> | null;
  metrics_after: Record<string, number> | null;
}

async function runAttack(attack: Attack, spec: Spec, s: Settings, fdCap: number): Promise<AttackRun> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-abuse-'));
  let bridge: (Server & { admin: AdminClient }) | undefined;
  try {
    const env = { LOG_LEVEL: 'info', ...spec.env };
    bridge = await startBridge(dir, s.profileDir, env);
    const creds = await provision(bridge.admin, 2, 1 + (typeof spec.apps === 'number' ? spec.apps : spec.apps(s.quick)));
    const [canaryApp, ...offenderApps] = creds.apps;
    const canaryCfg: CanaryConfig = { scenario: 'canary', url: bridge.url, app: canaryApp!, agent: creds.agents[0]!, eventsPerS: 10, localAddress: CANARY_ADDRESS };
    // The canary and the offender start together (a generator takes about a second to start); the attack waits
    // for the canary's first reply.
    const canaryUp = lineSeen();
    const canary = startGenerator<CanaryResult>(canaryCfg, canaryUp.see('READY'));
    const cfg: AbuseConfig = { scenario: 'abuse', attack, url: bridge.url, apps: offenderApps, agent: creds.agents[1]!, localAddresses: ['127.0.0.1'], waitForGo: true, ...spec.scale(s.quick, fdCap) };
    const offenderUp = lineSeen();
    const offenderRun = startGenerator<AbuseResult>(cfg, offenderUp.see('WAITING'));
    await Promise.race([Promise.all([canaryUp.seen, offenderUp.seen]), canary.result, offenderRun.result]);
    const watcher = watch(bridge);
    const logBefore = bridge.logBytes();
    console.error(`  ${attack}: ${describeAttack(attack, cfg)}...`);
    offenderRun.go();
    let offender: AbuseResult | null = null;
    let failure: string | null = null;
    try {
      offender = await offenderRun.result;
    } catch (err) {
      failure = (err as Error).message.slice(0, 2000);
    }
    await sleep(s.quick ? 300 : 1000); // what the attack left behind settles while the canary still runs
    canary.stop();
    const canaryResult = await canary.result.catch(() => null);
    const w = await watcher.stop();
    const up = bridge.child.exitCode === null && bridge.child.signalCode === null;
    const peak = peakRssKb(bridge.pid);
    let rows: AttackRun['rows'] = null;
    let listing: AttackRun['sessions_listing'] = null;
    let metricsAfter: Record<string, number> | null = null;
    const appId = offenderApps[0]!.app_id;
    if (up) {
      await bridge.admin.events({ limit: '1' }).catch(() => {}); // the admin read flushes the event log first
      metricsAfter = await metricsOf(bridge);
      if (attack === 'sessions') listing = await listSessions(bridge.admin, appId, s.quick ? 10_000 : 60_000).catch(() => null);
    }
    rows = await rowsOf(join(dir, 'bridge.sqlite'), appId);
    const logBytes = bridge.logBytes() - logBefore;
    const exit = up ? null : `exit ${bridge.child.exitCode ?? bridge.child.signalCode}: ${bridge.logs().slice(-1500)}`;
    return { attack, title: spec.title, env, stayed_up: up, exit, peak_rss_kb: peak ?? w.max_rss_kb, watch: w, canary: canaryResult, offender, offender_failure: failure, log_bytes: logBytes, log_tail: bridge.logs().split('\n').slice(-4), rows, sessions_listing: listing, metrics_after: metricsAfter };
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

function verdict(r: AttackRun): { met: boolean; measured: string } {
  const c = r.canary;
  const replied = c ? c.replies / Math.max(1, c.sent) : 0;
  const memOk = r.peak_rss_kb !== null && r.peak_rss_kb <= CEILING_KB;
  const canaryOk = !!c && replied >= 0.99 && c.latency_ms.p99 <= CANARY_P99_MS;
  const measured = `${r.stayed_up ? 'up' : 'DIED'}, peak RSS ${mib(r.peak_rss_kb)} MiB, canary ${c ? `${c.replies}/${c.sent} replied, p99 ${c.latency_ms.p99} ms` : 'failed'}`;
  return { met: r.stayed_up && memOk && canaryOk, measured };
}

export async function abuse(s: Settings) {
  const attacks = s.attacks ?? ATTACKS;
  const fdCap = openFilesLimit() - 1000;
  console.error(`Scenario abuse: ${attacks.length} attacks, each on a fresh bridge (LOG_LEVEL=info), a canary pair at 10 events/s`);
  const runs: AttackRun[] = [];
  for (const a of attacks) runs.push(await runAttack(a, SPECS[a], s, fdCap));
  const memory: Table = {
    title: `Scenario abuse: one hostile client per attack; memory ceiling ${CEILING_KB / 2 ** 20} GiB RSS; canary: an app + agent pair sending 10 events/s throughout`,
    columns: ['attack', 'bridge', 'peak RSS (MiB)', 'peak heap (MiB)', 'canary replied/sent', 'canary p99 (ms)', 'canary max (ms)', 'log written (KiB)', 'event rows (offender)'],
    rows: runs.map((r) => [
      r.title,
      r.stayed_up ? 'up' : 'DIED',
      mib(r.peak_rss_kb),
      mib(r.watch.max_heap_used_kb),
      r.canary ? `${r.canary.replies}/${r.canary.sent}` : 'failed',
      r.canary ? Number(r.canary.latency_ms.p99.toFixed(1)) : null,
      r.canary ? Number(r.canary.latency_ms.max.toFixed(1)) : null,
      Math.round(r.log_bytes / 1024),
      r.rows?.events_of_app ?? null,
    ]),
  };
  const offender: Table = {
    title: 'Scenario abuse: what each offender did and got back (error codes by count; close N = WebSocket close code)',
    columns: ['attack', 'sent', 'in (s)', 'offender got', 'figures'],
    rows: runs.map((r) => [r.title, r.offender?.sent ?? null, r.offender?.duration_s ?? null, r.offender ? codesText(r.offender.codes) : `generator failed: ${r.offender_failure?.split('\n')[0]}`, figuresOf(r)]),
  };
  const targets: Target[] = runs.map((r) => {
    const v = verdict(r);
    return { name: `abuse: ${r.title}`, goal: `bridge up, peak RSS <= ${CEILING_KB / 2 ** 20} GiB, canary >= 99% replied with p99 <= ${CANARY_P99_MS} ms`, measured: v.measured, met: v.met };
  });
  const errors = runs.filter((r) => r.offender_failure || !r.canary).length;
  return { json: { ceiling_rss_kb: CEILING_KB, canary_p99_limit_ms: CANARY_P99_MS, attacks: runs }, tables: [memory, offender], targets, errors };
}
