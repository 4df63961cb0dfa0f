// The abuse scenario's canary: a well-behaved app and agent pair, in a process of its own (an offender that
// saturates its own event loop must not slow the canary's clock), connected from another loopback address than the
// offender (so a bound per address does not count it with the offender), and provisioned in another organization
// (so a bound per organization does not either). The app sends small events at a fixed rate, under the default
// rate limit; the agent replies at once. It runs until SIGTERM, then waits briefly for the answers still due and
// prints its RESULT. A dropped socket is counted and reopened, so the figures say whether the pair kept being
// served, not only whether its first connection survived. Each SIGUSR2 moves it to the next phase (quiet, attack,
// after): every event, and every probe of the bridge's door (bench/load/probes.ts), counts in the phase it started
// in, so the quiet phase is the same bridge's baseline.
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebSocket } from 'ws';
import { Latencies, open, type Percentiles } from './common.js';
import { startProbes, type ProbeConfig, type ProbeCounts } from './probes.js';
import { ENDPOINT_PATHS, type ClientKind } from '../../generated/index.js';

export interface CanaryConfig {
  scenario: 'canary';
  url: string;
  app: { app_id: string; token: string };
  agent: { agent_id: string; token: string };
  eventsPerS: number;
  localAddress: string;
  /** Credentials and address of the door's probes; none when absent. */
  probe?: Omit<ProbeConfig, 'url'>;
}

export const PHASES = ['quiet', 'attack', 'after'] as const;
export type Phase = (typeof PHASES)[number];

export interface CanaryPhase {
  sent: number;
  replies: number;
  /** Events whose reply or error had not come 3 s after the canary was told to stop (or whose socket dropped). */
  unanswered: number;
  /** Events answered with an error. */
  errors: number;
  latency_ms: Percentiles;
}

export interface CanaryResult {
  /** All phases together. */
  sent: number;
  replies: number;
  unanswered: number;
  latency_ms: Percentiles;
  phases: Partial<Record<Phase, CanaryPhase>>;
  probes: Partial<Record<Phase, ProbeCounts>>;
  /** Error codes the canary's app and agent received, and the close codes of its sockets. */
  codes: Record<string, number>;
  reconnects: number;
}

const bump = (m: Record<string, number>, k: string) => void (m[k] = (m[k] ?? 0) + 1);

class PhaseFigures {
  latencies = new Latencies();
  sent = 0;
  replies = 0;
  lost = 0;
  errors = 0;
}

export async function runCanary(cfg: CanaryConfig): Promise<CanaryResult> {
  const all = new PhaseFigures();
  const figures: Partial<Record<Phase, PhaseFigures>> = {};
  let phase: Phase = 'quiet';
  const current = () => (figures[phase] ??= new PhaseFigures());
  const codes: Record<string, number> = {};
  const sentAt = new Map<string, { at: number; phase: PhaseFigures }>(); // thread_id of the pending event -> when and in which phase it was sent
  let stopping = false;
  let sent = 0;
  let reconnects = 0;
  const opts = { localAddress: cfg.localAddress };
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });

  // Each side reopens itself when dropped; what was pending on a dropped app socket is counted as lost.
  let app: WebSocket | undefined;
  let agent: WebSocket | undefined;
  const keep = async (kind: ClientKind): Promise<void> => {
    for (;;) {
      try {
        const ws = await open(
          `${cfg.url}${ENDPOINT_PATHS[kind]}`,
          auth(kind === 'app' ? cfg.app.token : cfg.agent.token),
          opts,
        );
        ws.on('error', () => {});
        ws.on('message', (data) => (kind === 'app' ? onApp(data.toString()) : onAgent(ws, data.toString())));
        ws.once('close', (code) => {
          if (stopping) return;
          bump(codes, `${kind} close ${code}`);
          if (kind === 'app') {
            app = undefined;
            for (const p of sentAt.values()) p.phase.lost++;
            all.lost += sentAt.size;
            sentAt.clear();
          } else agent = undefined;
          reconnects++;
          setTimeout(() => void keep(kind), 500);
        });
        if (kind === 'app') app = ws;
        else agent = ws;
        return;
      } catch (err) {
        bump(codes, `${kind} connect failed: ${(err as Error).message.slice(0, 60)}`);
        if (stopping) return;
        await sleep(500);
      }
    }
  };
  const onAgent = (ws: WebSocket, text: string) => {
    const msg = JSON.parse(text) as { type: string; event_id?: string; code?: string };
    if (msg.type === 'event')
      ws.send(JSON.stringify({ type: 'reply', event_id: msg.event_id, content: 'ok', done: true }));
    else if (msg.type === 'error') bump(codes, `agent ${msg.code}`);
  };
  const onApp = (text: string) => {
    const msg = JSON.parse(text) as { type: string; thread_id?: string; code?: string; event_id?: string };
    if (msg.type === 'accepted') return;
    if (msg.type === 'reply') {
      const t = sentAt.get(msg.thread_id!);
      if (t !== undefined) {
        const ms = performance.now() - t.at;
        for (const f of [all, t.phase]) {
          f.latencies.add(ms);
          f.replies++;
        }
        sentAt.delete(msg.thread_id!);
      }
      return;
    }
    if (msg.type === 'error') {
      bump(codes, `app ${msg.code}`);
      // An error ends its event; which one is not named by thread here, so the oldest pending stands for it.
      const oldest = sentAt.entries().next();
      if (!oldest.done) {
        oldest.value[1].phase.errors++;
        all.errors++;
        sentAt.delete(oldest.value[0]);
      }
    }
  };

  await Promise.all([keep('agent'), keep('app')]);
  // Ready once one event went round: the attack starts against a canary that works.
  const first = 'canary-ready';
  const warmUp = new PhaseFigures();
  for (let deadline = performance.now() + 10_000; warmUp.replies === 0;) {
    if (!sentAt.has(first) && app) {
      sentAt.set(first, { at: performance.now(), phase: warmUp });
      app.send(
        JSON.stringify({ type: 'event', agent_id: cfg.agent.agent_id, thread_id: first, payload: { text: 'hello' } }),
      );
    }
    if (performance.now() > deadline) throw new Error('the canary got no reply within 10 s');
    await sleep(10);
  }
  all.replies = 0;
  all.latencies = new Latencies();
  process.on('SIGUSR2', () => (phase = PHASES[Math.min(PHASES.indexOf(phase) + 1, PHASES.length - 1)]!));
  const probes = cfg.probe ? startProbes({ url: cfg.url, ...cfg.probe }, () => phase) : undefined;
  console.log('READY');

  const stopped = new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  // Each event pending on a thread id of its own, so that its reply is matched without parsing anything else; 1000
  // of them in turn keep the canary's sessions few (a collision would need a stall of 100 s at 10 events/s).
  const timer = setInterval(() => {
    if (!app) return;
    const thread = `canary-${sent++ % 1000}`;
    const f = current();
    f.sent++;
    all.sent++;
    sentAt.set(thread, { at: performance.now(), phase: f });
    app.send(
      JSON.stringify({
        type: 'event',
        agent_id: cfg.agent.agent_id,
        thread_id: thread,
        payload: { text: 'are you still there?' },
      }),
    );
  }, 1000 / cfg.eventsPerS);
  await stopped;
  clearInterval(timer);
  const probeCounts = probes?.stop();
  for (let deadline = performance.now() + 3000; sentAt.size > 0 && performance.now() < deadline;) await sleep(20);
  stopping = true;
  app?.close();
  agent?.close();
  const summary = (f: PhaseFigures, pending: number): CanaryPhase => ({
    sent: f.sent,
    replies: f.replies,
    unanswered: f.lost + pending,
    errors: f.errors,
    latency_ms: f.latencies.summary(),
  });
  const pendingOf = (f: PhaseFigures) => [...sentAt.values()].filter((p) => p.phase === f).length;
  const phases = Object.fromEntries(Object.entries(figures).map(([k, f]) => [k, summary(f, pendingOf(f))]));
  const whole = summary(all, sentAt.size);
  return {
    sent: whole.sent,
    replies: whole.replies,
    unanswered: whole.unanswered,
    latency_ms: whole.latency_ms,
    phases,
    probes: (await probeCounts) ?? {},
    codes,
    reconnects,
  };
}
