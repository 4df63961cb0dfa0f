// Benchmark harness: the bridge as in production against a bare WebSocket relay and (scenarios 1 to 3) a Socket.IO
// relay, the same load generator for all, each in its own process. Prints a table per scenario and the targets;
// writes bench/results/<time>.json.
//
//   npm run bench -- [--quick] [--scenarios 1,2,3,4,abuse,cluster] [--only bridge|relay|socketio] [--profile] [--attacks in-flight,...]
//                    [--duration S] [--warmup S] [--m 4] [--n 4] [--window 16] [--payload-bytes 1000]
//                    [--rates 1000,10000,30000] [--event-rate 2000] [--event-window 32] [--event-apps 8]
//                    [--idle-connections 20000] [--soak 600] [--soak-events 20]
//                    [--postgres-url URL] [--redis-url URL] [--cluster-rate 10000]
//                    [--resume-rates 1000,10000] [--resume-events 2000] [--resume-fragments 50]
//                    [--bridge-dir DIR]
//
//   1  token streaming agent -> app, closed loop: fragments/s, bridge / relay, bridge / socket.io
//   2  token streaming, open loop at fixed rates: the latency the bridge adds over the relay, and socket.io's
//   3  event acceptance with the event log on: accepted/s and latency (baseline: the relay's /echo; socket.io)
//   4  idle connections: server RSS per connection, then a soak of light traffic (growth is a leak)
//   abuse  the worst single hostile clients, one per fresh bridge: peak memory, a canary's replies, codes (not in the
//          default set: run it with --scenarios abuse; --attacks picks some of bench/scenarios/abuse-specs.ts's)
//   cluster  two nodes over PostgreSQL and Redis: what an app and its agent on different nodes cost, Redis messages
//          per fragment, two nodes vs one (not in the default set: it needs --postgres-url and --redis-url, default
//          TEST_POSTGRES_URL and TEST_REDIS_URL, and says what to start and skips without them)
//   resume  what apps opting in to resumable streams (?resume=1) cost: scenarios 1's and 2's load through one bridge
//          plainly and resumable, then the bridge's memory with --resume-events events held open mid-stream (not in
//          the default set: run it with --scenarios resume)
// --quick shrinks everything (a smoke run under a minute); --profile writes the bridge's V8 CPU profiles
// (.cpuprofile, open in Chrome DevTools or speedscope) to bench/results/profiles/<time>/. --bridge-dir runs another
// checkout's bridge (`node DIR/bin/bridge.js serve`, DIR with its node_modules) under this checkout's load, to
// measure two versions with the same generators.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, useBridgeDir } from './processes.js';
import { machine, printTable, printTargets, type Table, type Target } from './report.js';
import { abuse, ATTACKS } from './scenarios/abuse.js';
import { eventAcceptance } from './scenarios/events.js';
import { idleConnections } from './scenarios/idle.js';
import type { Settings } from './scenarios/settings.js';
import { cluster } from './scenarios/cluster.js';
import { closedLoop, openLoop } from './scenarios/streaming.js';
import { resume } from './scenarios/resume.js';
import { LIMITS } from '../generated/index.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    scenarios: { type: 'string', default: '1,2,3,4' },
    only: { type: 'string' },
    profile: { type: 'boolean', default: false },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    m: { type: 'string', default: '4' },
    n: { type: 'string', default: '4' },
    window: { type: 'string', default: '16' },
    'payload-bytes': { type: 'string', default: '1000' },
    rates: { type: 'string' },
    'event-rate': { type: 'string', default: '2000' },
    'event-window': { type: 'string', default: '32' },
    'event-apps': { type: 'string', default: '8' },
    'idle-connections': { type: 'string' },
    soak: { type: 'string' },
    'soak-events': { type: 'string', default: '20' },
    attacks: { type: 'string' },
    'postgres-url': { type: 'string' },
    'redis-url': { type: 'string' },
    'cluster-rate': { type: 'string', default: '10000' },
    'resume-rates': { type: 'string' },
    'resume-events': { type: 'string' },
    'resume-fragments': { type: 'string' },
    'bridge-dir': { type: 'string' },
  },
});

function whole(name: string, text: string, min = 1): number {
  const v = Number(text);
  if (!Number.isInteger(v) || v < min)
    throw new Error(`--${name} must be a whole number, ${min} or more (got ${text})`);
  return v;
}
function seconds(name: string, text: string, min: number): number {
  const v = Number(text);
  if (!(v >= min)) throw new Error(`--${name} must be a number of seconds, ${min} or more (got ${text})`);
  return v;
}

const quick = values.quick!;
const startedAt = new Date();
const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
if (values.only && !['bridge', 'relay', 'socketio'].includes(values.only))
  throw new Error('--only takes bridge, relay or socketio');
const scenarios = values.scenarios!.split(',').map((x) => x.trim());
for (const x of scenarios)
  if (!['1', '2', '3', '4', 'abuse', 'cluster', 'resume'].includes(x))
    throw new Error(`--scenarios: ${x} is not one of 1, 2, 3, 4, abuse, cluster, resume`);
if (values['bridge-dir']) {
  const dir = resolve(values['bridge-dir']);
  if (!existsSync(join(dir, 'bin/bridge.js')) || !existsSync(join(dir, 'node_modules')))
    throw new Error(`--bridge-dir: ${dir} has no bin/bridge.js or no node_modules`);
  useBridgeDir(dir);
}
const attacks = values.attacks?.split(',').map((x) => x.trim());
for (const x of attacks ?? [])
  if (!(ATTACKS as string[]).includes(x)) throw new Error(`--attacks: ${x} is not one of ${ATTACKS.join(', ')}`);
// Else the variables scripts/services.sh exports.
const postgresUrl = values['postgres-url'] || process.env.TEST_POSTGRES_URL;
const redisUrl = values['redis-url'] || process.env.TEST_REDIS_URL;
const settings: Settings = {
  quick,
  m: whole('m', values.m!),
  n: whole('n', values.n!),
  window: whole('window', values.window!),
  warmupS: seconds('warmup', values.warmup ?? (quick ? '0.3' : '2'), 0),
  durationS: seconds('duration', values.duration ?? (quick ? '1.5' : '20'), 0.1),
  payloadBytes: whole('payload-bytes', values['payload-bytes']!),
  rates: (values.rates ?? (quick ? '10000' : '1000,10000,30000')).split(',').map((r) => whole('rates', r)),
  eventRate: whole('event-rate', values['event-rate']!),
  eventWindow: whole('event-window', values['event-window']!),
  eventApps: whole('event-apps', values['event-apps']!),
  idleConnections: whole('idle-connections', values['idle-connections'] ?? (quick ? '1000' : '20000')),
  soakS: seconds('soak', values.soak ?? (quick ? '2' : '600'), 0),
  soakEventsPerS: whole('soak-events', values['soak-events']!),
  clusterRate: whole('cluster-rate', values['cluster-rate']!),
  resumeRates: (values['resume-rates'] ?? (quick ? '10000' : '1000,10000'))
    .split(',')
    .map((r) => whole('resume-rates', r)),
  resumeEvents: whole('resume-events', values['resume-events'] ?? (quick ? '200' : '2000')),
  resumeFragments: whole('resume-fragments', values['resume-fragments'] ?? (quick ? '10' : '50')),
  ...(postgresUrl ? { postgresUrl } : {}),
  ...(redisUrl ? { redisUrl } : {}),
  ...(values.only ? { only: values.only as NonNullable<Settings['only']> } : {}),
  ...(attacks ? { attacks: attacks as Settings['attacks'] } : {}),
  ...(values.profile ? { profileDir: join(ROOT, 'bench/results/profiles', stamp) } : {}),
};

// Checked before any scenario runs, so that a mistake here does not throw away the figures of the others.
if (scenarios.includes('cluster') && settings.m < 2)
  throw new Error('--scenarios cluster needs --m 2 or more (its two generators get half the agents each)');
// The held events are spread evenly over the apps and the agents; each must stay within its bound on events in flight.
if (scenarios.includes('resume')) {
  const perApp = Math.ceil(settings.resumeEvents / settings.n);
  const perAgent = Math.ceil(settings.resumeEvents / settings.m);
  if (perApp > LIMITS.eventsInFlightPerAppMax || perAgent > LIMITS.eventsInFlightPerAgentMax) {
    throw new Error(
      `--resume-events ${settings.resumeEvents} puts ${perApp} events in flight per app and ${perAgent} per agent; the bridge allows ${LIMITS.eventsInFlightPerAppMax} and ${LIMITS.eventsInFlightPerAgentMax} (raise --n and --m)`,
    );
  }
}

const runners = {
  '1': ['token_streaming', closedLoop],
  '2': ['open_loop_latency', openLoop],
  '3': ['event_acceptance', eventAcceptance],
  '4': ['idle_connections', idleConnections],
  abuse: ['abuse', abuse],
  cluster: ['cluster', cluster],
  resume: ['resume', resume],
} as const;
const tables: Table[] = [];
const targets: Target[] = [];
const json: Record<string, unknown> = {};
let errors = 0;
for (const id of scenarios) {
  const [name, run] = runners[id as keyof typeof runners];
  const out = await run(settings);
  json[name] = out.json;
  tables.push(...('tables' in out ? out.tables : [out.table]));
  targets.push(...out.targets);
  errors += out.errors;
}

const host = machine();
const bridgeOf = host.bridge ? `, bridge of ${host.bridge.dir} at ${host.bridge.git_commit?.slice(0, 12) ?? '?'}` : '';
console.log(
  `\n${host.cpus} x ${host.cpu_model}, ${host.memory_gb} GiB, Node ${host.node}, commit ${host.git_commit?.slice(0, 12) ?? '?'}${bridgeOf}${quick ? ' (--quick: figures are a smoke test, not results)' : ''}`,
);
for (const t of tables) printTable(t);
printTargets(targets);

const resultsDir = join(ROOT, 'bench/results');
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `${stamp}.json`);
const { profileDir, ...params } = settings;
// A results file is for comparing and sharing: the services' passwords stay out of it.
const withoutPassword = (url: string | undefined) => url?.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
Object.assign(params, { postgresUrl: withoutPassword(params.postgresUrl), redisUrl: withoutPassword(params.redisUrl) });
writeFileSync(
  file,
  `${JSON.stringify({ at: startedAt.toISOString(), finished_at: new Date().toISOString(), quick, params, machine: host, scenarios: json, targets, errors, profiles: profileDir ?? null }, null, 2)}\n`,
);
console.log(`\nwritten: ${file}${profileDir ? `\nprofiles: ${profileDir}` : ''}`);
if (errors > 0) {
  console.log(`\n${errors} errors during the run (see error_samples in the JSON)`);
  process.exitCode = 1;
}
