// The resume scenario's memory half: many events held open mid-stream, so that whoever started this generator can
// read the bridge's memory while they are. M agents, N apps (plainly or with `?resume=1`); each app sends its share
// of `events` round-robin over the agents, each agent streams `fragments` fragments for each event at once and
// replies to none. Told on stdout, each followed by a wait for SIGUSR2 (processes.ts's go()):
//   READY    the sockets are open and a first round (one event per app and agent, streamed and replied) is over;
//   HOLDING  every fragment of every held event has reached its app.
// Then the agents reply to every held event, and the result is printed once every reply has arrived.
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebSocket } from 'ws';
import { ENDPOINT_PATHS } from '../../generated/index.js';
import { Errors, frameType, open } from './common.js';
import { appEndpoint } from './streaming.js';

export interface HeldConfig {
  scenario: 'held';
  /** `ws://host:port` of a bridge. */
  url: string;
  agents: { agent_id: string; token: string }[];
  apps: { app_id: string; token: string }[];
  events: number;
  fragments: number;
  payloadBytes: number;
  resume: boolean;
}

export interface HeldResult {
  resume: boolean;
  events: number;
  fragments: number;
  /** Fragments the apps received while the events were held, and their frames' mean size. */
  fragments_received: number;
  fragment_bytes_mean: number;
  replies: number;
  errors: number;
  error_samples: string[];
}

const WORDS = 'the a prime number has exactly two divisors one and itself so seven is prime'.split(' ');

async function waitForGo(line: string): Promise<void> {
  const alive = setInterval(() => {}, 60_000); // a signal handler alone does not keep the process waiting
  const go = new Promise((resolve) => process.once('SIGUSR2', resolve));
  console.log(line);
  await go;
  clearInterval(alive);
}

async function until(what: string, done: () => boolean, errors: Errors, ms = 60_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!done()) {
    if (performance.now() > deadline)
      throw new Error(`${what} after ${ms / 1000} s (errors: ${errors.samples.join(' | ')})`);
    await sleep(5);
  }
}

export async function runHeld(cfg: HeldConfig): Promise<HeldResult> {
  const errors = new Errors();
  const payload = { text: 'x'.repeat(cfg.payloadBytes) };
  const agentSockets = await Promise.all(
    cfg.agents.map((a) => open(`${cfg.url}${ENDPOINT_PATHS.agent}`, { authorization: `Bearer ${a.token}` })),
  );
  const appSockets = await Promise.all(
    cfg.apps.map((a) => open(appEndpoint(cfg.url, cfg.resume), { authorization: `Bearer ${a.token}` })),
  );
  let stopping = false;
  for (const ws of [...agentSockets, ...appSockets])
    ws.on('close', (code, reason) => !stopping && errors.add('socket', `closed ${code} ${reason.toString()}`));

  // Each agent's open events, to reply to; whether an arriving event is answered at once (the first round) or held.
  const held: string[][] = agentSockets.map(() => []);
  let holding = false;
  let seed = 1;
  const fragment = () => {
    const count = 1 + (seed++ % 5);
    let text = '';
    for (let i = 0; i < count; i++) text += `${WORDS[(seed * 7 + i * 13) % WORDS.length]} `;
    return text;
  };
  // Corked per agent socket, as the streaming generator does, so that 50 fragments leave in a write or two.
  const stream = (ws: WebSocket, eventId: string) => {
    const sock = (ws as unknown as { _socket: Socket })._socket;
    sock.cork();
    for (let f = 0; f < cfg.fragments; f++)
      ws.send(JSON.stringify({ type: 'token', event_id: eventId, token: fragment() }));
    sock.uncork();
  };
  const reply = (ws: WebSocket, eventId: string) =>
    ws.send(JSON.stringify({ type: 'reply', event_id: eventId, content: 'done', done: true }));
  agentSockets.forEach((ws, i) =>
    ws.on('message', (data) => {
      const text = data.toString();
      const type = frameType(text);
      if (type === 'event') {
        const eventId = (JSON.parse(text) as { event_id: string }).event_id;
        stream(ws, eventId);
        if (holding) held[i]!.push(eventId);
        else reply(ws, eventId);
      } else if (type === 'error') errors.add(`agent ${i}`, text);
    }),
  );
  let fragments = 0;
  let fragmentBytes = 0;
  let replies = 0;
  appSockets.forEach((ws, j) =>
    ws.on('message', (data) => {
      const text = data.toString();
      const type = frameType(text);
      if (type === 'token') {
        if (holding) {
          fragments++;
          fragmentBytes += text.length;
        }
      } else if (type === 'reply') replies++;
      else if (type === 'error') errors.add(`app ${j}`, text);
    }),
  );
  const send = (j: number, i: number, k: number) =>
    appSockets[j]!.send(
      JSON.stringify({ type: 'event', agent_id: cfg.agents[i]!.agent_id, thread_id: `held-${i}-${j}-${k}`, payload }),
    );

  // The first round: every path through the bridge taken once before the baseline is read.
  for (let j = 0; j < appSockets.length; j++) for (let i = 0; i < agentSockets.length; i++) send(j, i, 0);
  const firstRound = appSockets.length * agentSockets.length;
  await until('first round not replied', () => replies >= firstRound, errors);
  await waitForGo('READY');

  holding = true;
  replies = 0;
  for (let k = 0; k < cfg.events; k++)
    send(k % appSockets.length, Math.floor(k / appSockets.length) % agentSockets.length, k + 1);
  await until(
    'held events not all streamed',
    () => fragments >= cfg.events * cfg.fragments || errors.count > 0,
    errors,
  );
  await waitForGo('HOLDING');

  agentSockets.forEach((ws, i) => {
    for (const eventId of held[i]!) reply(ws, eventId);
  });
  await until('held events not all replied', () => replies >= cfg.events || errors.count > 0, errors);
  stopping = true;
  for (const ws of [...agentSockets, ...appSockets]) ws.close();
  return {
    resume: cfg.resume,
    events: cfg.events,
    fragments: cfg.fragments,
    fragments_received: fragments,
    fragment_bytes_mean: fragments ? Math.round(fragmentBytes / fragments) : 0,
    replies,
    errors: errors.count,
    error_samples: errors.samples,
  };
}
