// Attacks unread-100 and unread-200: `count` connections of one app token each send an event and then never read
// again (raw sockets, paused: what the bridge sends them stays in its own send queue once the kernel's buffers are
// full), while the app's own agent streams 4 KB fragments to every one of those events, round-robin, until each
// got `stream.bytesPerEvent` or `timeS` passed. What the bridge holds for readers that never read is then held for
// `holdS`, and the agent replies to every event.
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  auth,
  bump,
  frameCode,
  room,
  secondsSince,
  until,
  type AbuseConfig,
  type AbuseResult,
} from './abuse-common.js';
import { frameEventId, frameType, open } from './common.js';
import { clientFrame, rawUpgrade } from './raw-socket.js';
import { ENDPOINT_PATHS } from '../../generated/index.js';

export async function runUnread(cfg: AbuseConfig): Promise<AbuseResult> {
  const codes: Record<string, number> = {};
  const counts: Record<string, number> = {
    connections: 0,
    events: 0,
    tokens_sent: 0,
    bytes_streamed: 0,
    agent_errors: 0,
  };
  const fragment = cfg.fragment ?? 'y'.repeat(4000);
  const bytesPerEvent = cfg.stream?.bytesPerEvent ?? 12_000_000;
  const address = cfg.localAddresses[0]!;
  const events: string[] = [];
  let stopping = false;
  const agent = await open(`${cfg.url}${ENDPOINT_PATHS.agent}`, auth(cfg.agent!.token), { localAddress: address });
  agent.on('message', (data) => {
    const text = data.toString();
    const type = frameType(text);
    if (type === 'event') events.push(frameEventId(text)!);
    else if (type === 'error') {
      counts.agent_errors!++;
      bump(codes, `agent ${frameCode(text)}`);
    }
  });
  agent.on('close', (code) => !stopping && bump(codes, `agent close ${code}`));

  const t0 = performance.now();
  const sockets: Socket[] = [];
  for (let i = 0; i < cfg.count; i++) {
    try {
      const socket = await rawUpgrade(cfg.url, ENDPOINT_PATHS.app, cfg.apps[0]!.token, address);
      socket.on('error', (err) => bump(codes, `app ${(err as NodeJS.ErrnoException).code ?? err.message}`));
      socket.write(
        clientFrame(
          Buffer.from(
            JSON.stringify({
              type: 'event',
              agent_id: cfg.agent!.agent_id,
              thread_id: `unread-${i}`,
              payload: { text: 'tell me everything' },
            }),
          ),
        ),
      );
      socket.pause(); // never reads again: not the accepted, not the fragments
      sockets.push(socket);
      counts.connections!++;
    } catch (err) {
      bump(codes, `app ${(err as Error).message}`);
    }
  }
  await until(() => events.length >= sockets.length, 10_000);
  counts.events = events.length;
  const deadline = t0 + (cfg.timeS ?? 60) * 1000;
  const frames = events.map((id) => `{"type":"token","event_id":"${id}","token":${JSON.stringify(fragment)}}`);
  const perEvent = Math.ceil(bytesPerEvent / Buffer.byteLength(fragment));
  for (let round = 0; round < perEvent && performance.now() < deadline && agent.readyState === agent.OPEN; round++) {
    for (const frame of frames) agent.send(frame);
    counts.tokens_sent! += frames.length;
    await room(agent);
  }
  counts.bytes_streamed = counts.tokens_sent! * Buffer.byteLength(fragment);
  await until(() => agent.bufferedAmount === 0, 10_000);
  const durationS = secondsSince(t0);
  await sleep((cfg.holdS ?? 2) * 1000); // the scenario samples the bridge holding it all
  counts.still_open = sockets.filter((s) => !s.destroyed).length;
  for (const id of events) agent.send(`{"type":"reply","event_id":"${id}","content":"done","done":true}`);
  await until(() => agent.bufferedAmount === 0, 5000);
  stopping = true;
  for (const s of sockets) s.destroy();
  agent.terminate();
  return { attack: cfg.attack, sent: counts.tokens_sent!, duration_s: durationS, codes, counts };
}
