// The attacks of the abuse scenario: the bridge settings each runs with, its size (--quick: small enough for a
// smoke run), and the figures that say what it did to the bridge.
import type { AbuseConfig, Attack } from '../load/abuse.js';
import type { AttackRun } from './abuse.js';
import { byLabel, total } from './abuse-watch.js';

export interface Spec {
  title: string;
  /** Bridge variables over startBridge's (rate limit off); '' = the bridge's default. */
  env: Record<string, string>;
  /** Offender apps to provision. */
  apps: number | ((quick: boolean) => number);
  scale(quick: boolean, fdCap: number): Pick<AbuseConfig, 'count'> & Partial<AbuseConfig>;
}

const streaming = (quick: boolean) => (quick ? { count: 2, stream: { concurrency: 2, bytesPerEvent: 1_500_000 } } : { count: 16, stream: { concurrency: 4, bytesPerEvent: 16_000_000 } });
// Connections: as many as the open-files limit lets both the bridge and the offender hold.
const connections = (quick: boolean, fdCap: number) => (quick ? 300 : Math.min(19_000, fdCap));

export const SPECS: Record<Attack, Spec> = {
  'in-flight': { title: '1 events in flight (60 KB, agent never replies)', env: {}, apps: 1, scale: (q) => ({ count: q ? 1100 : 20_000, payloadBytes: 60_000 }) },
  streaming: { title: '2a streaming 4 KB fragments, empty reply', env: {}, apps: 1, scale: streaming },
  'streaming-app-closes': { title: '2b streaming, app closes mid-stream', env: {}, apps: 1, scale: streaming },
  sessions: { title: '3 a new thread_id per event', env: {}, apps: 1, scale: (q) => ({ count: q ? 1500 : 200_000, window: 512 }) },
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
  handshakes: { title: '5 handshakes with wrong tokens', env: {}, apps: 1, scale: (q) => ({ count: q ? 300 : 20_000, localAddresses: Array.from({ length: 50 }, (_, i) => `127.0.2.${i + 1}`) }) },
  // One token from 250 source addresses, so that a bound per address is not what stops it.
  'connections-per-app': {
    title: '6a connections, one app token',
    env: {},
    apps: 1,
    scale: (q, fdCap) => ({ count: connections(q, fdCap), holdS: q ? 0.5 : 2, localAddresses: Array.from({ length: 250 }, (_, i) => `127.0.1.${i + 1}`) }),
  },
  // One source address, the connections spread over 100 app tokens, so that a bound per app is not what stops it.
  'connections-per-address': {
    title: '6b connections, one address',
    env: {},
    apps: (q) => (q ? 10 : 100),
    scale: (q, fdCap) => ({ count: connections(q, fdCap), holdS: q ? 0.5 : 2, localAddresses: ['127.0.0.3'] }),
  },
};

export function describeAttack(attack: Attack, cfg: AbuseConfig): string {
  if (cfg.stream) return `${cfg.count} events, ${cfg.stream.concurrency} at a time, ${cfg.stream.bytesPerEvent / 1e6} MB streamed each`;
  const unit = attack === 'handshakes' ? 'handshakes' : attack.startsWith('connections') ? 'connections' : 'frames';
  return `${cfg.count} ${unit}`;
}

export const mib = (kb: number | null | undefined) => (kb === null || kb === undefined ? null : Number((kb / 1024).toFixed(1)));
const labels = (m: Record<string, number>) => (Object.keys(m).length ? Object.entries(m).map(([k, v]) => `${k} ${v}`).join(', ') : 'none');

/** The attack's own figures, in a sentence for the table (the JSON keeps them all). */
export function figuresOf(r: AttackRun): string {
  const m = r.metrics_after;
  const c = r.offender?.counts ?? {};
  switch (r.attack) {
    case 'in-flight':
      return `accepted ${c.accepted}, agent got ${c.agent_events}; bridge_events_refused_total: ${labels(byLabel(m, 'bridge_events_refused_total'))}`;
    case 'streaming':
    case 'streaming-app-closes':
      return `${c.tokens_sent} fragments sent (${((c.tokens_sent ?? 0) * 4000 / 1e6).toFixed(0)} MB), app got ${c.tokens_received}, replies ${c.replies}; text discarded: ${labels(byLabel(m, 'bridge_streamed_text_discarded_total'))}; replies refused: ${labels(byLabel(m, 'bridge_replies_refused_total'))}`;
    case 'sessions': {
      const l = r.sessions_listing;
      const listed = l ? `${l.count}${l.complete ? '' : '+ (listing stopped)'} listed in ${l.pages} pages, ${l.seconds} s (first page ${l.first_page_ms} ms, slowest ${l.slowest_page_ms} ms)` : 'listing failed';
      const metric = Object.entries(m ?? {}).filter(([k]) => k.startsWith('bridge_sessions'));
      return `sessions: ${listed}; ${r.rows?.sessions_of_app ?? '?'} rows in SQLite; metric: ${metric.length ? metric.map(([k, v]) => `${k} ${v}`).join(', ') : 'none'}`;
    }
    case 'log-flood':
      return `bridge_events_not_logged_total ${total(m, 'bridge_events_not_logged_total') ?? 'absent'} (${labels(byLabel(m, 'bridge_events_not_logged_total'))}); event rows ${r.rows?.events_of_app ?? '?'}`;
    case 'handshakes': {
      const refused = total(m, 'bridge_handshakes_refused_total');
      return `log ${Math.round(r.log_bytes / Math.max(1, r.offender?.sent ?? 1))} B per handshake; bridge_handshakes_refused_total ${refused ?? 'absent'}`;
    }
    default:
      return `admitted ${c.admitted} of ${r.offender?.sent} (bridge_connections app peak ${r.watch.max_app_connections ?? '?'}); accept failures: ${labels(byLabel(m, 'bridge_accept_failures_total'))}`;
  }
}
