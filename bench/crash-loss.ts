// What a crash (SIGKILL) under load costs the event log (O2, O9): the bridge as in production (`node bin/bridge.js
// serve`, a file SQLite database, the rate limit off) under closed-loop event load (apps keep `--window` events
// awaiting `accepted` each; agents reply at once), killed, restarted on the same file. Per run:
//   - missing: events the app got `accepted` for that have no row after the restart, and the oldest one's age at the
//     kill (from the app's `accepted`): the crash-loss window O2 documents;
//   - replied but pending: rows of events the app got its reply for whose outcome is still `pending` after the
//     restart, then after the restarted bridge's (test) clock is moved past the lost-outcome age (O9): how many are
//     still `pending` and how many were marked `lost`.
//
//   npx tsx bench/crash-loss.ts [--runs 5] [--load-s 3] [--apps 8] [--agents 4] [--window 32] [--payload-bytes 1000]
//                               [--flush-ms N (EVENT_LOG_FLUSH_MS; default: the bridge's)]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { WebSocket } from 'ws';
import { ENDPOINT_PATHS, LIMITS } from '../generated/index.js';
import { frameEventId, frameType, open } from './load/common.js';
import { provision, shutdown, startBridge, type Server } from './processes.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    'load-s': { type: 'string', default: '3' },
    apps: { type: 'string', default: '8' },
    agents: { type: 'string', default: '4' },
    window: { type: 'string', default: '32' },
    'payload-bytes': { type: 'string', default: '1000' },
    'flush-ms': { type: 'string' },
  },
});
const whole = (name: string, v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number, 1 or more`);
  return n;
};
const RUNS = whole('runs', values.runs!);
const LOAD_MS = Number(values['load-s']) * 1000;
const APPS = whole('apps', values.apps!);
const AGENTS = whole('agents', values.agents!);
const WINDOW = whole('window', values.window!);
const PAYLOAD = JSON.stringify({ text: 'x'.repeat(whole('payload-bytes', values['payload-bytes']!)) });
if (!(LOAD_MS >= 500)) throw new Error('--load-s must be 0.5 or more');
const env: Record<string, string> = values['flush-ms']
  ? { EVENT_LOG_FLUSH_MS: String(whole('flush-ms', values['flush-ms'])) }
  : {};
/** Moved past the age at which a pending row counts as lost (O9: agent timeout + reconnect grace + 60 s). */
const ADVANCE_MS = LIMITS.agentTimeoutMs + LIMITS.agentReconnectGraceMs + 120_000;

interface Run {
  events_per_s: number;
  accepted: number;
  replied: number;
  missing: number;
  oldest_missing_ms: number | null;
  replied_missing: number;
  replied_pending: number;
  oldest_replied_pending_ms: number | null;
  pending_after_advance: number;
  lost_after_advance: number;
}

/** Every row of the event log, through GET /admin/v1/events, a page at a time. */
async function eventLog(admin: AdminLike): Promise<Map<string, string>> {
  const outcomes = new Map<string, string>();
  let before: string | null = null;
  do {
    const page: { events: { event_id: string; outcome: string }[]; next_before: string | null } = await admin.get(
      `/admin/v1/events?limit=500${before ? `&before=${before}` : ''}`,
    );
    for (const e of page.events) outcomes.set(e.event_id, e.outcome);
    before = page.next_before;
  } while (before);
  return outcomes;
}

interface AdminLike {
  get(path: string): Promise<any>;
  post(path: string, body: unknown): Promise<any>;
}

function adminOf(server: Server): AdminLike {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
      method,
      headers: {
        authorization: 'Bearer bench-admin-token-0123456789',
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}

async function once(): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-crash-'));
  let server: Server | undefined;
  try {
    const first = await startBridge(dir, undefined, env);
    server = first;
    const creds = await provision(first.admin, AGENTS, APPS);
    const sockets: WebSocket[] = [];
    for (const a of creds.agents) {
      const ws = await open(`${first.url}${ENDPOINT_PATHS.agent}`, { authorization: `Bearer ${a.token}` });
      ws.on('error', () => {}); // the kill resets the connection
      ws.on('message', (data) => {
        const text = data.toString();
        if (frameType(text) === 'event')
          ws.send(`{"type":"reply","event_id":"${frameEventId(text)}","content":"ok","done":true}`);
      });
      sockets.push(ws);
    }
    const acceptedAt = new Map<string, number>();
    const repliedAt = new Map<string, number>();
    let loading = true;
    let sent = 0;
    for (const a of creds.apps) {
      const ws = await open(`${first.url}${ENDPOINT_PATHS.app}`, { authorization: `Bearer ${a.token}` });
      ws.on('error', () => {});
      const send = () => {
        const k = sent++;
        ws.send(
          `{"type":"event","agent_id":"${creds.agents[k % AGENTS]!.agent_id}","thread_id":"t-${k % 64}","payload":${PAYLOAD}}`,
        );
      };
      ws.on('message', (data) => {
        const now = performance.now();
        const text = data.toString();
        const type = frameType(text);
        if (type === 'accepted') {
          acceptedAt.set(frameEventId(text)!, now);
          if (loading) send();
        } else if (type === 'reply') repliedAt.set(frameEventId(text)!, now);
        else if (type === 'error' && loading) throw new Error(`error during the load: ${text}`);
      });
      sockets.push(ws);
      for (let i = 0; i < WINDOW; i++) send();
    }
    const loadStarted = performance.now();
    await sleep(LOAD_MS);

    const exited = new Promise<void>((resolve) => first.child.once('exit', () => resolve()));
    const killedAt = performance.now();
    first.child.kill('SIGKILL');
    loading = false;
    await exited;
    for (const ws of sockets) ws.terminate();
    const accepted = acceptedAt.size;
    const events_per_s = Math.round(accepted / ((killedAt - loadStarted) / 1000));

    // Restarted on the same file, with the test clock, so that time can be moved past the lost-outcome age.
    const second = await startBridge(dir, undefined, { ...env, BRIDGE_TEST_CLOCK: '1' });
    server = second;
    const admin = adminOf(second);
    const rows = await eventLog(admin);
    let missing = 0;
    let oldestMissing: number | null = null;
    let repliedMissing = 0;
    let repliedPending = 0;
    let oldestRepliedPending: number | null = null;
    for (const [id, at] of acceptedAt) {
      const outcome = rows.get(id);
      if (outcome === undefined) {
        missing++;
        oldestMissing = Math.max(oldestMissing ?? 0, killedAt - at);
        if (repliedAt.has(id)) repliedMissing++;
      } else if (outcome === 'pending' && repliedAt.has(id)) {
        repliedPending++;
        oldestRepliedPending = Math.max(oldestRepliedPending ?? 0, killedAt - repliedAt.get(id)!);
      }
    }
    await admin.post('/admin/v1/test/clock', { advance_ms: ADVANCE_MS });
    await sleep(200); // the marking is a database update the clock's timer started
    const later = await eventLog(admin);
    let pendingAfter = 0;
    let lostAfter = 0;
    for (const id of repliedAt.keys()) {
      const outcome = later.get(id);
      if (outcome === 'pending') pendingAfter++;
      else if (outcome === 'lost') lostAfter++;
    }
    return {
      events_per_s,
      accepted,
      replied: repliedAt.size,
      missing,
      oldest_missing_ms: oldestMissing === null ? null : Number(oldestMissing.toFixed(1)),
      replied_missing: repliedMissing,
      replied_pending: repliedPending,
      oldest_replied_pending_ms: oldestRepliedPending === null ? null : Number(oldestRepliedPending.toFixed(1)),
      pending_after_advance: pendingAfter,
      lost_after_advance: lostAfter,
    };
  } finally {
    await shutdown(server, dir);
  }
}

const runs: Run[] = [];
for (let i = 0; i < RUNS; i++) {
  const r = await once();
  runs.push(r);
  console.log(
    `run ${i + 1}: ${r.events_per_s} events/s, accepted ${r.accepted}, replied ${r.replied}; ` +
      `missing ${r.missing} (oldest ${r.oldest_missing_ms ?? '-'} ms at the kill; ${r.replied_missing} of them replied); ` +
      `replied but pending ${r.replied_pending} (oldest reply ${r.oldest_replied_pending_ms ?? '-'} ms before the kill); ` +
      `after +${ADVANCE_MS / 1000} s: pending ${r.pending_after_advance}, lost ${r.lost_after_advance}`,
  );
}
const range = (xs: (number | null)[]) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? `${Math.min(...v)}–${Math.max(...v)}` : '-';
};
console.log(
  `\n${RUNS} runs, ${APPS} apps x ${WINDOW} awaiting accepted, ${AGENTS} agents, ${LOAD_MS / 1000} s each, EVENT_LOG_FLUSH_MS=${env.EVENT_LOG_FLUSH_MS ?? 'default'}:\n` +
    `  events/s ${range(runs.map((r) => r.events_per_s))}; oldest missing row ${range(runs.map((r) => r.oldest_missing_ms))} ms old at the kill; ` +
    `missing rows ${range(runs.map((r) => r.missing))}; replied but pending after the restart ${range(runs.map((r) => r.replied_pending))}; ` +
    `still pending once past the lost-outcome age ${range(runs.map((r) => r.pending_after_advance))}`,
);
console.log(
  JSON.stringify({
    bench: 'crash-loss',
    runs: RUNS,
    apps: APPS,
    agents: AGENTS,
    window: WINDOW,
    load_s: LOAD_MS / 1000,
    flush_ms: env.EVENT_LOG_FLUSH_MS ?? null,
    results: runs,
  }),
);
