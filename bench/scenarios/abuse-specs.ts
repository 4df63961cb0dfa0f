// The attacks of the abuse scenario: the bridge settings each runs with, its size (--quick: small enough for a
// smoke run), and the figures that say what it did to the bridge.
import type { AbuseConfig, AbuseResult, Attack } from '../load/abuse.js';
import type { CanaryResult } from '../load/canary.js';
import { LIMITS } from '../../generated/index.js';
import { byLabel, total, type listSessions, type rowsOf, type Watch } from './abuse-watch.js';

export interface Spec {
  title: string;
  /** Bridge variables over startBridge's (rate limit off); '' = the bridge's default. */
  env: Record<string, string>;
  /** Offender apps to provision. */
  apps: number | ((quick: boolean) => number);
  /** Agents with long names and descriptions to register in the offender's organization first (its directory). */
  directory?: (quick: boolean) => number;
  /** `filesLimit`: the open-files limit (the bridge's and the offender's). */
  scale(quick: boolean, filesLimit: number): Pick<AbuseConfig, 'count'> & Partial<AbuseConfig>;
}

const streaming = (quick: boolean) =>
  quick
    ? { count: 2, stream: { concurrency: 2, bytesPerEvent: 1_500_000 } }
    : { count: 16, stream: { concurrency: 4, bytesPerEvent: 16_000_000 } };
// Connections: as many as the open-files limit lets both the bridge and the offender hold.
const connections = (quick: boolean, filesLimit: number) => (quick ? 300 : Math.min(19_000, filesLimit - 1000));
const addresses = (n: number, third: number) => Array.from({ length: n }, (_, i) => `127.0.${third}.${i + 1}`);
// unread-*: 16 MB streamed to each reader, well past sendBufferMaxBytes (8 MiB) and what the kernel's buffers take
// of a socket that stopped reading (its send buffer, up to tcp_wmem's 4 MiB, and the receiver's few hundred KB).
const unread = (connections: number) => (quick: boolean) =>
  quick
    ? { count: 5, stream: { concurrency: 5, bytesPerEvent: 12_000_000 }, timeS: 10, holdS: 1 }
    : { count: connections, stream: { concurrency: connections, bytesPerEvent: 16_000_000 }, timeS: 60, holdS: 3 };
const directory = (agents: number, quickAgents: number) => ({
  apps: 1,
  env: {},
  directory: (q: boolean) => (q ? quickAgents : agents),
  scale: (q: boolean) => ({ count: 10_000, timeS: q ? 2 : 20 }),
});

export const SPECS: Record<Attack, Spec> = {
  'in-flight': {
    title: '1 events in flight (60 KB, agent never replies)',
    env: {},
    apps: 1,
    scale: (q) => ({ count: q ? 1100 : 20_000, payloadBytes: 60_000 }),
  },
  streaming: { title: '2a streaming 4 KB fragments, empty reply', env: {}, apps: 1, scale: streaming },
  'streaming-app-closes': { title: '2b streaming, app closes mid-stream', env: {}, apps: 1, scale: streaming },
  sessions: {
    title: '3 a new thread_id per event',
    env: {},
    apps: 1,
    scale: (q) => ({ count: q ? 1500 : 200_000, window: 512 }),
  },
  // The default rate limit (20/s, burst 40): what this attack is about is the frames it refuses. At most 2000
  // awaiting their answer: unbounded, the answers queued for the offender passed the 8 MiB send buffer and the
  // bridge closed it (SLOW_CONSUMER) halfway, which W17 is for but is not this attack.
  'log-flood': {
    title: '4 invalid + over-rate frames, rate limit on',
    env: { RATE_LIMIT_EVENTS_PER_SECOND: '', RATE_LIMIT_BURST: '' },
    apps: 1,
    scale: (q) => ({ count: q ? 5000 : 100_000, window: 2000 }),
  },
  // From 50 source addresses: tens of thousands of short connections from one would run out of ephemeral ports.
  handshakes: {
    title: '5 handshakes with wrong tokens',
    env: {},
    apps: 1,
    scale: (q) => ({
      count: q ? 300 : 20_000,
      localAddresses: Array.from({ length: 50 }, (_, i) => `127.0.2.${i + 1}`),
    }),
  },
  // One token from 250 source addresses, so that a bound per address is not what stops it.
  'connections-per-app': {
    title: '6a connections, one app token',
    env: {},
    apps: 1,
    scale: (q, filesLimit) => ({
      count: connections(q, filesLimit),
      holdS: q ? 0.5 : 2,
      localAddresses: addresses(250, 1),
    }),
  },
  // One source address, the connections spread over 100 app tokens, so that a bound per app is not what stops it.
  'connections-per-address': {
    title: '6b connections, one address',
    env: {},
    apps: (q) => (q ? 10 : 100),
    scale: (q, filesLimit) => ({
      count: connections(q, filesLimit),
      holdS: q ? 0.5 : 2,
      localAddresses: ['127.0.0.3'],
    }),
  },
  // The campaign of issue 27: what one client could make the bridge hold with every bound of the time respected.
  'unread-100': {
    title: '7a 100 unread connections of one app, its agent streaming',
    env: {},
    apps: 1,
    scale: unread(100),
  },
  'unread-200': {
    title: '7b 200 unread connections of one app, its agent streaming',
    env: {},
    apps: 1,
    scale: unread(200),
  },
  // Under connectionsPerAppMax (1000), from 10 addresses so that a bound per address is not what stops it.
  'unfinished-frames': {
    title: '8 unfinished ~1 MiB frames, one app',
    env: {},
    apps: 1,
    scale: (q) => ({ count: q ? 20 : 990, frameBytes: 1_040_000, holdS: q ? 1 : 30, localAddresses: addresses(10, 4) }),
  },
  // More than the bridge's TCP cap (the open-files limit less what it keeps open, O8): what the offender's own
  // limit allows, from 40 addresses (ephemeral ports).
  'half-open': {
    title: '9 anonymous half-open upgrades',
    env: {},
    apps: 1,
    scale: (q, filesLimit) => ({
      count: q ? 500 : filesLimit - 50,
      holdS: q ? 2 : 30,
      localAddresses: addresses(40, 5),
    }),
  },
  // ~900 KB of text in 100-byte fragments: about 2 MB of frames per replay, under the event's bound (976,000). Two
  // replays asked at a time, so that the bridge always has one to send while the app reads the other (two fit in
  // the send buffer, 8 MiB).
  'resume-replay': {
    title: '10 replaying an ended ~2 MB stream',
    env: {},
    apps: 1,
    scale: (q) => ({
      count: 1_000_000,
      window: 2,
      fragment: 'z'.repeat(100),
      // 400 KB of 100-byte fragments is ~910 KB kept as R7 counts it (each token frame's JSON, index, buffers):
      // within one event's bound (streamedTextMaxBytes), so every resume from 0 is a whole replay (900 KB met
      // RESUME_GAP).
      stream: { concurrency: 1, bytesPerEvent: q ? 100_000 : 400_000 },
      timeS: q ? 2 : 30,
    }),
  },
  // 20 apps x 18 events x ~975,000 bytes counted: up to each event's bound (streamedTextMaxBytes) and past each
  // app's (16 MiB) and the node's (256 MiB) kept for resumes; each fragment of 4096 bytes counted
  // (tokenFragmentMaxBytes) is 24,576 as JSON (\u0001).
  'escaped-fragments': {
    title: '11a escaped fragments (4096 x U+0001), 20 resumable apps',
    env: {},
    apps: (q) => (q ? 3 : 20),
    scale: (q) => ({
      count: q ? 6 : 360,
      fragment: '\u0001'.repeat(LIMITS.tokenFragmentMaxBytes),
      stream: { concurrency: q ? 6 : 360, bytesPerEvent: q ? 100_000 : LIMITS.streamedTextMaxBytes - 1000 },
      timeS: q ? 10 : 90,
      holdS: q ? 1 : 3,
    }),
  },
  'empty-fragments': {
    title: '11b empty fragments, one resumable app',
    env: {},
    apps: 1,
    scale: (q) => ({
      count: q ? 50_000 : 2_000_000,
      fragment: '',
      stream: { concurrency: 4, bytesPerEvent: 0 },
      timeS: q ? 10 : 60,
      holdS: q ? 1 : 3,
    }),
  },
  'directory-1k': { title: '12a discover, 1,000 agents with long descriptions', ...directory(1000, 100) },
  'directory-7k': { title: '12b discover, 7,000 agents with long descriptions', ...directory(7000, 300) },
};

export function describeAttack(attack: Attack, cfg: AbuseConfig): string {
  const within = cfg.timeS ? ` (at most ${cfg.timeS} s)` : '';
  const held = cfg.holdS ? `, held ${cfg.holdS} s` : '';
  switch (attack) {
    case 'unread-100':
    case 'unread-200':
      return `${cfg.count} connections that never read, ${cfg.stream!.bytesPerEvent / 1e6} MB streamed to each${within}${held}`;
    case 'unfinished-frames':
      return `${cfg.count} connections, each all but the last byte of a ${cfg.frameBytes} B frame${held}`;
    case 'half-open':
      return `${cfg.count} half-open upgrade requests${held}`;
    case 'resume-replay':
      return `a ${cfg.stream!.bytesPerEvent / 1e3} KB stream in ${cfg.fragment!.length}-byte fragments, replayed${within}`;
    case 'escaped-fragments':
      return `${cfg.count} events over ${cfg.apps.length} resumable apps, ${cfg.stream!.bytesPerEvent / 1e3} KB counted each${within}${held}`;
    case 'empty-fragments':
      return `${cfg.count} empty fragments over ${cfg.stream!.concurrency} events${within}${held}`;
    case 'directory-1k':
    case 'directory-7k':
      return `${cfg.count} discovers${within}`;
    default:
  }
  if (cfg.stream)
    return `${cfg.count} events, ${cfg.stream.concurrency} at a time, ${cfg.stream.bytesPerEvent / 1e6} MB streamed each`;
  const unit = attack === 'handshakes' ? 'handshakes' : attack.startsWith('connections') ? 'connections' : 'frames';
  return `${cfg.count} ${unit}`;
}

const mb = (bytes: number | null | undefined) =>
  bytes === null || bytes === undefined ? '?' : (bytes / 1e6).toFixed(1);
export const mib = (kb: number | null | undefined) =>
  kb === null || kb === undefined ? null : Number((kb / 1024).toFixed(1));
const labels = (m: Record<string, number>) =>
  Object.keys(m).length
    ? Object.entries(m)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')
    : 'none';

/** What one attack did: the bridge's figures around it, the canary's and the offender's. */
export interface AttackRun {
  attack: Attack;
  title: string;
  env: Record<string, string>;
  stayed_up: boolean;
  exit: string | null;
  peak_rss_kb: number | null;
  /** The bridge just before the attack (after the quiet phase): RSS, V8 heap used. */
  before: { rss_kb: number | null; heap_used_kb: number | null };
  /** The machine's load average (1, 5, 15 min) as the attack started and as it ended. */
  load_before: number[];
  load_after: number[];
  quiet_s: number;
  /** From the offender's go to its end. */
  attack_s: number;
  /** The bridge's CPU time over that time, in percent of one core. */
  bridge_cpu_pct: number | null;
  /** What the scenario made before the attack: the directory's agents and how long registering them took. */
  setup: { directory_agents: number; directory_s: number };
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

/** The attack's own figures, in a sentence for the table (the JSON keeps them all). */
export function figuresOf(r: AttackRun): string {
  const m = r.metrics_after;
  const c = r.offender?.counts ?? {};
  switch (r.attack) {
    case 'in-flight':
      return `accepted ${c.accepted}, agent got ${c.agent_events}; bridge_events_refused_total: ${labels(byLabel(m, 'bridge_events_refused_total'))}`;
    case 'streaming':
    case 'streaming-app-closes':
      return `${c.tokens_sent} fragments sent (${(((c.tokens_sent ?? 0) * 4000) / 1e6).toFixed(0)} MB), app got ${c.tokens_received}, replies ${c.replies}; text discarded: ${labels(byLabel(m, 'bridge_streamed_text_discarded_total'))}; replies refused: ${labels(byLabel(m, 'bridge_replies_refused_total'))}`;
    case 'sessions': {
      const l = r.sessions_listing;
      const listed = l
        ? `${l.count}${l.complete ? '' : '+ (listing stopped)'} listed in ${l.pages} pages, ${l.seconds} s (first page ${l.first_page_ms} ms, slowest ${l.slowest_page_ms} ms)`
        : 'listing failed';
      const metric = Object.entries(m ?? {}).filter(([k]) => k.startsWith('bridge_sessions'));
      return `sessions: ${listed}; ${r.rows?.sessions_of_app ?? '?'} rows in SQLite; metric: ${metric.length ? metric.map(([k, v]) => `${k} ${v}`).join(', ') : 'none'}`;
    }
    case 'log-flood':
      return `bridge_events_not_logged_total ${total(m, 'bridge_events_not_logged_total') ?? 'absent'} (${labels(byLabel(m, 'bridge_events_not_logged_total'))}); event rows ${r.rows?.events_of_app ?? '?'}`;
    case 'handshakes': {
      const refused = total(m, 'bridge_handshakes_refused_total');
      return `log ${Math.round(r.log_bytes / Math.max(1, r.offender?.sent ?? 1))} B per handshake; bridge_handshakes_refused_total ${refused ?? 'absent'}`;
    }
    case 'unread-100':
    case 'unread-200':
      return `${c.connections} connections, ${c.events} events, ${mb(c.bytes_streamed)} MB streamed in ${c.tokens_sent} fragments; ${c.still_open} sockets open after the hold; bridge_connections app peak ${r.watch.max_app_connections ?? '?'}`;
    case 'unfinished-frames':
    case 'half-open': {
      const sent =
        r.attack === 'half-open'
          ? `${c.open_at_hold ?? '?'} open at the hold`
          : `${mb(c.bytes_sent)} MB of unfinished frames sent (${mb(c.bytes_unsent)} MB not taken)`;
      const first = c.first_close_in_hold_s === undefined ? '' : ` (the first after ${c.first_close_in_hold_s} s)`;
      return `${sent}; closed by the bridge: ${c.closed_before_hold ?? 0} before the hold, ${c.closed_during_hold ?? 0} during it${first}; ${c.held_to_end ?? 0} held to the end; accept failures: ${labels(byLabel(m, 'bridge_accept_failures_total'))}`;
    }
    case 'resume-replay':
      return `${c.resumes} resumes (${c.replays_complete} replayed whole, ${c.resumes_refused} refused), ${((c.bytes_in ?? 0) / 1e3).toFixed(0)} KB in, ${((c.bytes_out ?? 0) / 1e9).toFixed(2)} GB out; the stream: ${c.stream_fragments} fragments, ${mb(c.stream_bytes)} MB; bridge_resumes_total: ${labels(byLabel(m, 'bridge_resumes_total'))}`;
    case 'escaped-fragments':
    case 'empty-fragments':
      return `${c.fragments_sent} fragments (${mb(c.bytes_counted)} MB counted, ${mb(c.agent_bytes_sent)} MB of frames) to ${c.events} events of ${c.apps} apps; apps got ${c.tokens_received}${c.replay_first_seq === undefined ? '' : `; a resume from 0 began at seq ${c.replay_first_seq} (${c.replay_fragments_in_3s} fragments in 3 s)`}; peak bridge_resume_buffer_bytes ${mb(r.watch.max_metrics.bridge_resume_buffer_bytes)} MB, bridge_resume_events ${r.watch.max_metrics.bridge_resume_events ?? '?'}; dropped: ${labels(byLabel(m, 'bridge_resume_dropped_bytes_total'))}`;
    case 'directory-1k':
    case 'directory-7k':
      return `${r.setup.directory_agents} agents registered in ${r.setup.directory_s} s; ${c.answers} answers to ${r.offender?.sent} discovers, largest ${mb(c.largest_answer_bytes)} MB listing ${c.agents_listed}, slowest ${c.slowest_answer_ms} ms, mean ${c.mean_answer_ms} ms; ${c.reconnects} reconnects`;
    default:
      return `admitted ${c.admitted} of ${r.offender?.sent} (bridge_connections app peak ${r.watch.max_app_connections ?? '?'}); accept failures: ${labels(byLabel(m, 'bridge_accept_failures_total'))}`;
  }
}
