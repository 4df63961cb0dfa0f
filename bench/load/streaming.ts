// Scenarios 1 and 2: token streaming agent -> app. M agents each stream to N apps (M x N streams). Each app sends
// one event per agent; the agent answers with `token` fragments of 1–5 words. Every fragment's text starts with the
// time it was due (performance.now(), same process), so the app measures its latency when it arrives.
//   closed loop (scenario 1): K fragments in flight per stream, each arrival lets the agent send one more;
//   open loop (scenario 2): a fixed total rate, fragments due on a schedule whatever the server does, latency
//   counted from the due time (so a stall shows, instead of slowing the sender down).
// Targets: the bridge (tokens from run.ts), bench/relay.ts (one app and one agent socket per stream, paired by
// key; the same JSON frames, forwarded verbatim) or bench/socketio-relay.ts (one socket per agent and per app, as
// on the bridge; the same content as Socket.IO events: ./socketio.ts). On several nodes of one bridge, or of the
// Socket.IO relay with its Redis adapter, `appUrl` and `agentUrl` put the apps and the agents on the nodes of the
// placement measured (both default to `url`; the bare relay is one server).
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebSocket } from 'ws';
import {
  cpuSeconds,
  drain,
  Errors,
  Latencies,
  measure,
  open,
  pace,
  timedResult,
  type TimedConfig,
  type TimedResult,
} from './common.js';
import { socketIoStreams } from './socketio.js';
import type { Hooks, Stream } from './stream.js';
import { ENDPOINT_PATHS } from '../../generated/index.js';
import { resumeQuery } from '../../src/sdk/resume.js';

export interface StreamingConfig extends TimedConfig {
  scenario: 'streaming';
  /** M agents, N apps: M x N streams. */
  m: number;
  n: number;
  apps?: { app_id: string; token: string }[];
  /** The node the apps, and the agents, connect to (several nodes of the bridge or the Socket.IO relay); `url` when absent. */
  appUrl?: string;
  agentUrl?: string;
  /**
   * Numbers each stream's fragments and checks at the app that they arrive each once and in order (what crossing
   * nodes must keep). Off by default: it makes every fragment a few bytes longer than scenarios 1 and 2 measure.
   */
  sequence?: boolean;
  /** Apps connect with `?resume=1` (the resume extension, R1): what keeping their streams for a resume costs. */
  resume?: boolean;
}

/** With `sequence`: what the app got of what the agents sent, over the whole run (warm-up and drain included). */
export interface Order {
  sent: number;
  received: number;
  /** Fragments that arrived after a later one of their stream. */
  out_of_order: number;
  /** Fragments a stream skipped over when a later one arrived first (lost, or late: then also out_of_order). */
  skipped: number;
}

export interface StreamingResult extends TimedResult {
  streams: number;
  fragments: number;
  fragments_per_s: number;
  fragment_bytes_mean: number;
  order?: Order;
  /** Events sent again because the app's node did not know yet that their agent had connected (several nodes). */
  start_retries: number;
  /** CPU seconds (user + system) the generator used in all, start-up included. */
  generator_cpu_s: number;
  /** Filled in by run.ts for the bridge: its GC time and pauses during the run (warm-up included). */
  bridge_gc?: { gc_seconds: Record<string, number>; gc_count: Record<string, number> } | null;
}

const WORDS =
  'the a prime number has exactly two divisors one and itself so seven is prime but nine is not because three divides it evenly'.split(
    ' ',
  );

export async function runStreaming(cfg: StreamingConfig): Promise<StreamingResult> {
  const payloadText = 'x'.repeat(cfg.payloadBytes);
  const errors = new Errors();
  const latencies = new Latencies();
  const closedLoop = cfg.rate === undefined;
  let stopping = false;
  let measuring = false;
  let fragments = 0;
  let fragmentBytes = 0;
  let replies = 0;
  let wordSeed = 1;
  const order: Order = { sent: 0, received: 0, out_of_order: 0, skipped: 0 };

  const fragmentFor = (s: Stream, dueAt: number): string => {
    const count = 1 + (wordSeed++ % 5);
    let text = cfg.sequence ? `${dueAt.toFixed(3)}/${s.sent}` : dueAt.toFixed(3);
    for (let i = 0; i < count; i++) text += ` ${WORDS[(wordSeed * 7 + i * 13) % WORDS.length]}`;
    return text;
  };
  // Sends of one event-loop turn leave corked, so a burst goes out in a few writes instead of one per frame (the
  // generator must not be the bottleneck of a 2-core machine). Every target gets the same treatment (the Socket.IO
  // agent's too: ./socketio.ts).
  const corked = new Set<Socket>();
  const uncorkAll = () => {
    for (const sock of corked) sock.uncork();
    corked.clear();
  };
  const sendFragment = (s: Stream, dueAt: number) => {
    s.inFlight++;
    const sock = s.agentTcp;
    if (!corked.has(sock)) {
      if (corked.size === 0) setImmediate(uncorkAll);
      corked.add(sock);
      sock.cork();
    }
    s.sendToken(fragmentFor(s, dueAt));
    s.sent++;
  };
  const startStream = (s: Stream) => {
    if (s.started) return;
    s.started = true;
    if (closedLoop) for (let i = 0; i < cfg.window; i++) sendFragment(s, performance.now());
  };
  const onToken = (s: Stream, token: string, frameBytes: number) => {
    const now = performance.now();
    s.inFlight--;
    let head = token.slice(0, token.indexOf(' '));
    if (cfg.sequence) {
      const slash = head.indexOf('/');
      checkOrder(s, Number(head.slice(slash + 1)));
      head = head.slice(0, slash);
    }
    if (measuring) {
      fragments++;
      fragmentBytes += frameBytes;
      latencies.add(now - Number(head));
    }
    if (closedLoop && !stopping) sendFragment(s, now);
  };
  const checkOrder = (s: Stream, seq: number) => {
    order.received++;
    if (seq === s.next) s.next++;
    else if (seq > s.next) {
      order.skipped += seq - s.next;
      s.next = seq + 1;
    } else order.out_of_order++;
  };

  // On several nodes an agent's arrival reaches the apps' node through Redis a moment after its socket opened, so
  // an event sent at once can be refused AGENT_OFFLINE (retry: true). Sent again, and counted: a client would see it.
  let startRetries = 0;
  const retryStart = (s: Stream): boolean => {
    if (s.started || stopping) return false;
    startRetries++;
    setTimeout(() => s.sendEvent(payloadText), 50);
    return true;
  };
  const hooks: Hooks = {
    errors,
    stopping: () => stopping,
    startStream,
    onToken,
    onReply: () => replies++,
    retryStart,
  };
  const streams =
    cfg.target === 'bridge'
      ? await bridgeStreams(cfg, hooks)
      : cfg.target === 'socketio'
        ? await socketIoStreams(cfg, hooks)
        : await relayStreams(cfg, hooks);
  for (const s of streams) s.sendEvent(payloadText);

  const startDeadline = performance.now() + 10_000;
  while (!streams.every((s) => s.started)) {
    if (performance.now() > startDeadline)
      throw new Error(`streams not started after 10 s (errors: ${errors.samples.join(' | ')})`);
    await sleep(5);
  }

  // Open loop: fragments round-robin over the streams.
  const stopPacer = closedLoop
    ? () => {}
    : pace(cfg.rate!, (k, dueAt) => sendFragment(streams[k % streams.length]!, dueAt));
  // Told on stdout, so that whoever started this generator can read other processes' CPU over the same window.
  const cpu = await measure(cfg, (on) => {
    measuring = on;
    console.log(on ? 'MEASURING' : 'MEASURED');
  });
  stopping = true;
  stopPacer();

  // Drain the fragments in flight, then (bridge, Socket.IO) end each event with a reply.
  const undrained = await drain(() => streams.reduce((a, s) => a + s.inFlight, 0));
  if (undrained) errors.add('drain', `${undrained} fragments never arrived`);
  if (cfg.sequence) {
    order.sent = streams.reduce((a, s) => a + s.sent, 0);
    if (order.out_of_order || order.skipped)
      errors.add(
        'order',
        `${order.out_of_order} fragments out of order, ${order.skipped} skipped over (of ${order.sent} sent)`,
      );
  }
  if (cfg.target !== 'relay') {
    for (const s of streams) s.sendReply();
    const replyDeadline = performance.now() + 5000;
    while (replies < streams.length && performance.now() < replyDeadline) await sleep(5);
    if (replies < streams.length) errors.add('reply', `${streams.length - replies} replies missing`);
  }
  for (const s of streams) s.close();

  return {
    ...timedResult(cfg, cpu, latencies, errors),
    streams: streams.length,
    fragments,
    fragments_per_s: Math.round(fragments / cpu.measured_s),
    fragment_bytes_mean: fragments ? Math.round(fragmentBytes / fragments) : 0,
    ...(cfg.sequence ? { order } : {}),
    start_retries: startRetries,
    generator_cpu_s: cpuSeconds(),
  };
}

/** The app endpoint of `base` (`ws://host:port`), asking for resumable streams or not. */
export const appEndpoint = (base: string, resume = false) =>
  resumeQuery(new URL(`${base}${ENDPOINT_PATHS.app}`), resume).toString();

/** A stream over two ws sockets (the bridge's and the bare relay's frames); closes while running are errors. */
function wsStream(
  hooks: Hooks,
  ids: { threadId: string; agentId: string; eventId?: string },
  agentWs: WebSocket,
  appWs: WebSocket,
): Stream {
  const s: Stream = {
    ...ids,
    inFlight: 0,
    started: false,
    sent: 0,
    next: 0,
    agentTcp: (agentWs as unknown as { _socket: Socket })._socket,
    sendEvent: (text) =>
      appWs.send(JSON.stringify({ type: 'event', agent_id: s.agentId, thread_id: s.threadId, payload: { text } })),
    sendToken: (text) => agentWs.send(JSON.stringify({ type: 'token', event_id: s.eventId, token: text })),
    sendReply: () => agentWs.send(JSON.stringify({ type: 'reply', event_id: s.eventId, content: 'done', done: true })),
    close: () => {
      appWs.close();
      agentWs.close();
    },
  };
  const closed = (who: string) => (code: number, reason: Buffer) =>
    !hooks.stopping() && hooks.errors.add(who, `closed ${code} ${reason.toString()}`);
  appWs.on('close', closed('app socket'));
  agentWs.on('close', closed('agent socket'));
  return s;
}

/** One socket per agent and per app, authenticated by their tokens; streams found by thread id and agent id. */
async function bridgeStreams(cfg: StreamingConfig, hooks: Hooks): Promise<Stream[]> {
  const { errors, startStream, onToken, onReply, retryStart } = hooks;
  const agents = cfg.agents ?? [];
  const apps = cfg.apps ?? [];
  if (agents.length !== cfg.m || apps.length !== cfg.n) throw new Error('bridge target: need m agents and n apps');
  const agentSockets = await Promise.all(
    agents.map((a) =>
      open(`${cfg.agentUrl ?? cfg.url}${ENDPOINT_PATHS.agent}`, { authorization: `Bearer ${a.token}` }),
    ),
  );
  const appSockets = await Promise.all(
    apps.map((a) => open(appEndpoint(cfg.appUrl ?? cfg.url, cfg.resume), { authorization: `Bearer ${a.token}` })),
  );
  const streams: Stream[] = [];
  const byThread = new Map<string, Stream>();
  const byAppAgent = new Map<string, Stream>(); // `${appIdx}/${agent_id}`
  for (let i = 0; i < cfg.m; i++) {
    for (let j = 0; j < cfg.n; j++) {
      const s = wsStream(
        hooks,
        { threadId: `bench-${i}-${j}`, agentId: agents[i]!.agent_id },
        agentSockets[i]!,
        appSockets[j]!,
      );
      streams.push(s);
      byThread.set(s.threadId, s);
      byAppAgent.set(`${j}/${agents[i]!.agent_id}`, s);
    }
  }
  agentSockets.forEach((ws, i) => {
    ws.on('message', (data) => {
      const text = data.toString();
      const msg = JSON.parse(text) as { type: string; event_id?: string; thread_id?: string };
      if (msg.type === 'event') {
        const s = byThread.get(msg.thread_id!);
        if (!s) return errors.add(`agent ${i}`, `unexpected event ${text.slice(0, 200)}`);
        s.eventId = msg.event_id;
        startStream(s);
      } else if (msg.type === 'error') errors.add(`agent ${i}`, text);
    });
  });
  appSockets.forEach((ws, j) => {
    ws.on('message', (data) => {
      const text = data.toString();
      const msg = JSON.parse(text) as { type: string; agent_id?: string; token?: string; code?: string };
      if (msg.type === 'token') {
        const s = byAppAgent.get(`${j}/${msg.agent_id}`);
        if (s) onToken(s, msg.token!, text.length);
        else errors.add(`app ${j}`, `token of unknown stream ${text.slice(0, 200)}`);
      } else if (msg.type === 'reply') onReply();
      else if (msg.type === 'error') {
        const s = byAppAgent.get(`${j}/${msg.agent_id}`);
        if (!(msg.code === 'AGENT_OFFLINE' && s && retryStart(s))) errors.add(`app ${j}`, text);
      }
    });
  });
  return streams;
}

/** A pair of sockets per stream on the relay (one server: `url`); the event id has the bridge's shape (a 26-character ULID). */
async function relayStreams(cfg: StreamingConfig, hooks: Hooks): Promise<Stream[]> {
  const { errors, startStream, onToken } = hooks;
  const streams: Stream[] = [];
  for (let i = 0; i < cfg.m; i++) {
    for (let j = 0; j < cfg.n; j++) {
      const key = `s-${i}-${j}`;
      const appWs = await open(`${cfg.url}/app?key=${key}`);
      const agentWs = await open(`${cfg.url}/agent?key=${key}`);
      const s = wsStream(
        hooks,
        {
          threadId: `bench-${i}-${j}`,
          agentId: `agent-${i * cfg.n + j}`,
          eventId: `01BENCH${String(i * cfg.n + j).padStart(19, '0')}`,
        },
        agentWs,
        appWs,
      );
      streams.push(s);
      agentWs.on('message', (data) => {
        const msg = JSON.parse(data.toString()) as { type: string };
        if (msg.type === 'event') startStream(s);
      });
      appWs.on('message', (data) => {
        const text = data.toString();
        const msg = JSON.parse(text) as { type: string; token?: string };
        if (msg.type === 'token') onToken(s, msg.token!, text.length);
        else errors.add(`app ${key}`, text);
      });
    }
  }
  return streams;
}
