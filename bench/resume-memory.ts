// What resumable streams (R7) cost in the core, without sockets: memory per event in flight (V8 heap and the
// bytes outside it) with and without ?resume=1, with no fragment and with a streamed answer, and the time per
// forwarded fragment. `node --expose-gc --import tsx bench/resume-memory.ts [events] [fragments]`.
import type { ClientKind } from '../generated/index.js';
import { makeBridge, type Bridge } from '../src/core/bridge.js';
import { Directory, hashToken, type AgentRecord, type AppRecord } from '../src/core/directory.js';
import type { ConnectionHandlers, Socket } from '../src/core/transport.js';
import { AdjustableClock } from '../src/shared/clock.js';

const EVENTS = Number(process.argv[2] ?? 10_000);
const FRAGMENTS = Number(process.argv[3] ?? 100);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

interface Run {
  bridge: Bridge;
  app: ConnectionHandlers;
  agent: ConnectionHandlers;
  eventIds: string[];
}

function start(resumable: boolean): Run {
  const directory = new Directory();
  directory.addOrg({ org_id: 'org', name: 'Org', created_at: 0 });
  const app: AppRecord = { app_id: 'a', org_id: 'org', name: 'a', active: true, created_at: 0 };
  const agent: AgentRecord = {
    agent_id: 'x',
    org_id: 'org',
    name: 'x',
    description: '',
    ttl_days: 14,
    allowlist: null,
    active: true,
    created_at: 0,
  };
  directory.addApp(app);
  directory.addAgent(agent);
  const many = EVENTS * 2;
  const bridge = makeBridge({
    directory,
    clock: new AdjustableClock({ frozen: true, start: 0 }),
    maxEventsInFlightPerApp: many,
    maxEventsInFlightPerAgent: many,
  });
  const eventIds: string[] = [];
  const socket = (id: number, onFrame: (text: string) => void): Socket => ({
    id,
    send: onFrame,
    close() {},
    bufferedBytes: () => 0,
  });
  const token = (kind: ClientKind, owner_id: string) => ({
    hash: hashToken(owner_id),
    kind,
    owner_id,
    created_at: 0,
    expires_at: null,
  });
  const appHandlers = bridge.open(
    socket(1, (text) => {
      if (text.startsWith('{"type":"accepted"')) eventIds.push(JSON.parse(text).event_id);
    }),
    { kind: 'app', app, token: token('app', 'a') },
    undefined,
    resumable,
  );
  const agentHandlers = bridge.open(
    socket(2, () => {}),
    { kind: 'agent', agent, token: token('agent', 'x') },
  );
  return { bridge, app: appHandlers, agent: agentHandlers, eventIds };
}

function memory(): { heap: number; outside: number } {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, outside: m.arrayBuffers + m.external };
}

const perEvent = (bytes: number) => `${Math.round(bytes / EVENTS)} B`;

function measure(resumable: boolean): void {
  const before = memory();
  const run = start(resumable);
  for (let i = 0; i < EVENTS; i++)
    run.app.message(`{"type":"event","agent_id":"x","thread_id":"t${i % 100}","payload":{"q":${i}}}`, false);
  const accepted = memory();
  const fragment = 'word ';
  const started = process.hrtime.bigint();
  for (const eventId of run.eventIds) {
    for (let f = 0; f < FRAGMENTS; f++)
      run.agent.message(`{"type":"token","event_id":"${eventId}","token":"${fragment}"}`, false);
  }
  const nsPerFragment = Number(process.hrtime.bigint() - started) / (EVENTS * FRAGMENTS);
  const streamed = memory();
  const kept = run.bridge.resumeStats();
  console.log(
    `${resumable ? 'resumable' : 'plain    '}: per event in flight, no fragment: heap ${perEvent(accepted.heap - before.heap)}, outside ${perEvent(accepted.outside - before.outside)}; ` +
      `after ${FRAGMENTS} fragments of ${fragment.length} bytes: heap ${perEvent(streamed.heap - before.heap)}, outside ${perEvent(streamed.outside - before.outside)} ` +
      `(kept for resumes: ${perEvent(kept.bytes)}); ${nsPerFragment.toFixed(0)} ns per fragment`,
  );
  run.bridge.shutdown();
}

// Twice each, alternating: the first run warms the JIT up.
for (const resumable of [false, true, false, true]) measure(resumable);
