// Prometheus metrics (prom-client). Gauges and the token counter are read from the bridge when scraped, so
// nothing is counted twice on the per-message path; events are counted as they end.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { VERSION, type AuditAction } from '../../generated/index.js';
import type { Bridge } from '../core/bridge.js';
import type { BridgeObserver } from '../core/observer.js';
import { ACCEPT_FAILURE_REASONS, type AcceptFailureReason } from './accept-failures.js';
import type { UnauthenticatedStats } from '../ws/unauthenticated.js';

export interface Metrics {
  registry: Registry;
  observer: BridgeObserver;
  /** One connection the bridge could not accept (O8). */
  acceptFailed(reason: AcceptFailureReason): void;
  /** One admin change recorded in the audit trail (D10). */
  adminAction(action: AuditAction): void;
  /** One retention sweep that deleted nothing: the wall clock moved in a way the monotonic clock cannot explain (F2). */
  sweepRefused(): void;
}

/** What the event log's writer tells /metrics (the WriteBehind). */
export interface EventLogStats {
  /** Rows waiting to be written: queued, in the commit under way, or kept for a retry. */
  readonly pending: number;
  /** Rows dropped without being written since the start, by reason. */
  readonly dropped: Readonly<Record<string, number>>;
  /** While its commits fail and rows wait for them: for how long. */
  readonly failing: { forMs: number } | undefined;
}

export function makeMetrics(
  bridge: () => Bridge,
  eventLog: EventLogStats,
  sessionCount: () => number,
  unauthenticated?: () => UnauthenticatedStats,
): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // The Prometheus convention for what a process runs: always 1, the version in a label, so a query can group or
  // join by it and a rolling upgrade shows which node runs which version. Each node says its own.
  new Gauge({
    name: 'bridge_build_info',
    help: 'Always 1; the version label is the version of the bridge this node runs.',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version: VERSION }, 1);
  new Gauge({
    name: 'bridge_connections',
    help: 'Open WebSocket connections by client kind.',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const stats = bridge().stats();
      this.set({ kind: 'app' }, stats.apps);
      this.set({ kind: 'agent' }, stats.agents);
    },
  });
  new Gauge({
    name: 'bridge_events_in_flight',
    help: 'Accepted events waiting for their reply or error.',
    registers: [registry],
    collect() {
      this.set(bridge().stats().eventsInFlight);
    },
  });
  counted(registry, 'bridge_tokens_forwarded_total', 'Token fragments forwarded from agents to apps.', () =>
    bridge().tokensForwarded(),
  );
  // What the bounds of L13-L16 did, by a label that names the bound or the reason (never an id, O6).
  countedByLabel(
    registry,
    'bridge_events_refused_total',
    "Events refused with TOO_MANY_EVENTS, by the bound on events in flight that refused them: app, agent, total (the node's events), payloads (the node's bytes of payloads) (L13, L23).",
    'limit',
    () => bridge().limitCounters().eventsRefused,
  );
  countedByLabel(
    registry,
    'bridge_streamed_text_discarded_total',
    'Events whose kept streamed text was discarded: over the per-event, per-agent or per-node bound, or their app gone.',
    'reason',
    () => bridge().limitCounters().textDiscarded,
  );
  countedByLabel(
    registry,
    'bridge_replies_refused_total',
    'Agent replies refused with REPLY_TOO_LARGE: too large for one frame, or empty content after a discarded stream.',
    'reason',
    () => bridge().limitCounters().repliesRefused,
  );
  countedByLabel(
    registry,
    'bridge_handshakes_refused_total',
    'WebSocket handshakes refused, by code: UNAUTHORIZED, TOKEN_REVOKED, FORBIDDEN (W1), TOO_MANY_CONNECTIONS (L18).',
    'code',
    () => bridge().limitCounters().handshakesRefused,
  );
  countedByLabel(
    registry,
    'bridge_connections_refused_total',
    'Handshakes refused with TOO_MANY_CONNECTIONS, by the bound: total, address, app (L18).',
    'limit',
    () => bridge().limitCounters().connectionsRefused,
  );
  // The bytes held for connections and what their bounds did (W17, L19, L20), and dead connections (L7, L22).
  countedByLabel(
    registry,
    'bridge_slow_consumers_total',
    'Connections closed with SLOW_CONSUMER, by the bound whose sum was over: connection (SEND_BUFFER_MAX_BYTES), app, agent, total (SEND_BUFFER_PER_APP_MAX_BYTES, _PER_AGENT_, _TOTAL_; L19).',
    'bound',
    () => bridge().limitCounters().slowConsumers,
  );
  new Gauge({
    name: 'bridge_send_buffer_bytes',
    help: 'Bytes queued for every connection and not yet taken by the network (as ws counts them: characters of text), read from each connection when scraped.',
    registers: [registry],
    collect() {
      this.set(bridge().sendBufferBytes());
    },
  });
  countedByLabel(
    registry,
    'bridge_incomplete_messages_total',
    'Connections closed with INCOMPLETE_MESSAGE, by the bound whose sum of messages received in part was over (app, agent, total), or timeout (PARTIAL_MESSAGE_TIMEOUT_MS; L20).',
    'bound',
    () => bridge().limitCounters().incompleteMessages,
  );
  new Gauge({
    name: 'bridge_partial_message_bytes',
    help: 'Bytes held for WebSocket messages received in part (their bytes so far and the chunks they came in, L20).',
    registers: [registry],
    collect() {
      this.set(bridge().partialMessageBytes());
    },
  });
  countedByLabel(
    registry,
    'bridge_closing_connections_destroyed_total',
    'Connections already closed for a reason of their own and destroyed without waiting for their close handshake: they still held the most of a sum over its bound (app, agent, total; L19, L20), or a refused handshake still sending a message after partialMessageTimeoutMs (timeout).',
    'bound',
    () => bridge().limitCounters().destroyed,
  );
  countedByLabel(
    registry,
    'bridge_heartbeat_timeouts_total',
    'Connections closed with HEARTBEAT_TIMEOUT, by reason: silent (no message for idleCloseMs, L7), no_pong (no answer to a WebSocket ping, L22).',
    'reason',
    () => bridge().limitCounters().heartbeatTimeouts,
  );
  if (unauthenticated) {
    new Gauge({
      name: 'bridge_unauthenticated_connections',
      help: 'TCP connections that have not completed an authenticated WebSocket handshake (HTTP requests and keep-alive connections included; L21).',
      registers: [registry],
      collect() {
        this.set(unauthenticated().open);
      },
    });
    countedByLabel(
      registry,
      'bridge_unauthenticated_connections_refused_total',
      'Connections refused with 503 TOO_MANY_CONNECTIONS before their request was read, by bound: total (MAX_UNAUTHENTICATED_CONNECTIONS), address (MAX_UNAUTHENTICATED_CONNECTIONS_PER_ADDRESS; L21).',
      'bound',
      () => unauthenticated().refused,
    );
    counted(
      registry,
      'bridge_unauthenticated_connections_evicted_total',
      'Unauthenticated connections closed to give their slot to a new one, all slots being held (L21).',
      () => unauthenticated().evicted,
    );
    counted(
      registry,
      'bridge_http_requests_timed_out_total',
      'HTTP requests answered 408 REQUEST_TIMEOUT: their headers or their whole request arrived too late (L21).',
      () => unauthenticated().timedOut,
    );
  }
  new Gauge({
    name: 'bridge_sessions',
    help: 'Sessions the bridge keeps (live, or expired and not yet swept).',
    registers: [registry],
    collect() {
      this.set(sessionCount());
    },
  });
  new Gauge({
    name: 'bridge_streamed_text_bytes',
    help: 'Bytes held for the streamed text of events in flight (kept for empty-content replies).',
    registers: [registry],
    collect() {
      this.set(bridge().streamedTextBytes());
    },
  });
  // What is kept for resumes (R7): what it holds, what its bounds dropped, and how resumes ended.
  new Gauge({
    name: 'bridge_resume_buffer_bytes',
    help: 'Bytes kept for resumes (fragments and final messages of resumable events, in flight or within resumeWindowMs of their end).',
    registers: [registry],
    collect() {
      this.set(bridge().resumeStats().bytes);
    },
  });
  new Gauge({
    name: 'bridge_resume_events',
    help: 'Resumable events kept for a resume: in flight, or ended within resumeWindowMs.',
    registers: [registry],
    collect() {
      this.set(bridge().resumeStats().events);
    },
  });
  countedByLabel(
    registry,
    'bridge_resume_dropped_bytes_total',
    'Bytes kept for resumes that were dropped to keep a bound, by reason: event_limit (STREAMED_TEXT_MAX_BYTES), app_limit (RESUME_BUFFER_PER_APP_MAX_BYTES), node_limit (RESUME_BUFFER_MAX_BYTES); a resume that needed them gets RESUME_GAP.',
    'reason',
    () => bridge().resumeStats().dropped,
  );
  countedByLabel(
    registry,
    'bridge_resumes_total',
    'Resume requests by outcome: resumed, gap (RESUME_GAP), refused (RESUME_REFUSED), limited (TOO_MANY_REQUESTS: the organization over its share of resumes or of bytes sent again).',
    'outcome',
    () => bridge().resumeStats().resumes,
  );
  // Cancels (S4, S7): how apps' cancels ended, and the cancelled events whose agents' late frames are dropped.
  countedByLabel(
    registry,
    'bridge_cancels_total',
    'Cancels by outcome: cancelled (the event ended with CANCELLED), refused (CANCEL_REFUSED: not in flight for the connection).',
    'outcome',
    () => bridge().cancelStats().cancels,
  );
  new Gauge({
    name: 'bridge_cancelled_events_remembered',
    help: "Cancelled events whose agent's later frames are dropped without an error (until its reply or error, or AGENT_TIMEOUT_MS after the cancel; at most EVENTS_IN_FLIGHT_PER_AGENT_MAX per agent).",
    registers: [registry],
    collect() {
      this.set(bridge().cancelStats().remembered);
    },
  });
  // Each organization's fair share (F3, R10): how often one was over it, and how long its agents waited.
  countedByLabel(
    registry,
    'bridge_fair_share_limited_total',
    'Times an organization was over its fair share on this node, by kind: fragments (an agent paused: FRAGMENTS_PER_ORG_PER_SECOND), discover and resume (TOO_MANY_REQUESTS: DISCOVERS_PER_ORG_PER_SECOND, RESUMES_PER_ORG_PER_SECOND), replay (TOO_MANY_REQUESTS: RESUME_REPLAY_BYTES_PER_ORG_PER_SECOND).',
    'kind',
    () => bridge().fairShareStats().limited,
  );
  let pausedReported = 0;
  new Counter({
    name: 'bridge_agent_paused_seconds_total',
    help: "Seconds agents' sockets were paused (not read) because their organization was over its share of fragments, all agents together (F3).",
    registers: [registry],
    collect() {
      const ms = bridge().fairShareStats().pausedMs;
      this.inc((ms - pausedReported) / 1000);
      pausedReported = ms;
    },
  });
  new Gauge({
    name: 'bridge_event_log_pending_rows',
    help: 'Event log rows and session changes waiting to be written: queued for the next group commit, in the one under way, or kept for a retry while the database does not take them (at most EVENT_LOG_QUEUE_MAX_ROWS).',
    registers: [registry],
    collect() {
      this.set(eventLog.pending);
    },
  });
  new Gauge({
    name: 'bridge_event_log_failing_seconds',
    help: "How long the event log's group commits have failed while rows wait for them (0 while the database takes them); /readyz answers 500 from 30 s on (O15).",
    registers: [registry],
    collect() {
      this.set((eventLog.failing?.forMs ?? 0) / 1000);
    },
  });
  countedByLabel(
    registry,
    'bridge_event_log_rows_dropped_total',
    'Event log rows and session changes dropped without being written, by reason: queue_full (more waited than EVENT_LOG_QUEUE_MAX_ROWS while the database did not take them; the oldest finished rows went), refused (the database refused the row itself), shutdown (still waiting when the bridge stopped). Each drop is logged too (O15).',
    'reason',
    () => ({ ...eventLog.dropped }),
  );
  const events = new Counter({
    name: 'bridge_events_total',
    help: 'App events by status (delivered, rejected) and outcome (as in the event log).',
    labelNames: ['status', 'outcome'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'bridge_event_latency_seconds',
    help: 'End-to-end latency of replied events, from the app event to the reply.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });
  const firstFragment = new Histogram({
    name: 'bridge_event_first_fragment_seconds',
    help: 'Time from an app event to the first token fragment forwarded for it (events that stream; on their home node).',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const acceptFailures = new Counter({
    name: 'bridge_accept_failures_total',
    help: 'Connections the bridge could not accept, by reason: MAX_CONNECTIONS (over the cap below the open-files limit), or the accept error (EMFILE, ENFILE, ENOBUFS, ENOMEM, OTHER).',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of ACCEPT_FAILURE_REASONS) acceptFailures.inc({ reason }, 0); // every series exists from the start, for alerts
  const notLogged = new Counter({
    name: 'bridge_events_not_logged_total',
    help: 'App events refused before or by the rate limit (invalid, too large, over the rate), by code: counted here instead of written to the event log (O1).',
    labelNames: ['code'],
    registers: [registry],
  });
  const evicted = new Counter({
    name: 'bridge_sessions_evicted_total',
    help: 'Sessions removed before their expiry to keep their app, or the node, within its session bound (L17, L23).',
    registers: [registry],
  });
  const adminActions = new Counter({
    name: 'bridge_admin_actions_total',
    help: 'Admin changes and dashboard sign-ins and sign-outs recorded in the audit trail, by action (D10).',
    labelNames: ['action'],
    registers: [registry],
  });
  const sweepsRefused = new Counter({
    name: 'bridge_retention_sweeps_refused_total',
    help: 'Hourly sweeps (retention, expired sessions, lost outcomes) that deleted nothing because the wall clock had moved more than a day beyond or behind the time that passed by the monotonic clock (F2).',
    registers: [registry],
  });
  const nothing = () => {};
  return {
    registry,
    acceptFailed: (reason) => acceptFailures.inc({ reason }),
    adminAction: (action) => adminActions.inc({ action }),
    sweepRefused: () => sweepsRefused.inc(),
    observer: {
      eventRejected(_e, code, admitted) {
        events.inc({ status: 'rejected', outcome: 'rejected' });
        if (!admitted) notLogged.inc({ code });
      },
      eventAccepted: nothing,
      eventDelivered: nothing,
      eventFirstFragment: (_id, ms) => firstFragment.observe(ms / 1000),
      eventEnded(e) {
        events.inc({ status: 'delivered', outcome: e.outcome });
        if (e.outcome === 'replied') latency.observe(e.latency_ms / 1000);
      },
      sessionOpened: nothing,
      sessionEvicted: () => evicted.inc(),
    },
  };
}

/** A counter from a total the bridge keeps: each scrape adds what was counted since the last one. */
export function counted(registry: Registry, name: string, help: string, read: () => number): void {
  let reported = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const total = read();
      this.inc(total - reported);
      reported = total;
    },
  });
}

/** A counter per label value, from totals the bridge keeps: each scrape adds what was counted since the last one. */
export function countedByLabel(
  registry: Registry,
  name: string,
  help: string,
  label: string,
  read: () => Record<string, number>,
): void {
  const reported = new Map<string, number>();
  new Counter({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect() {
      for (const [value, total] of Object.entries(read())) {
        this.inc({ [label]: value }, total - (reported.get(value) ?? 0));
        reported.set(value, total);
      }
    },
  });
}
