// The abuse scenario's offender: one hostile client per run, doing one attack as fast as the bridge lets it (each
// socket's unsent bytes are kept under a few MiB, so the offender's own memory is not what gives out). It counts
// what it got back by code; the scenario (bench/scenarios/abuse.ts) watches the bridge from outside meanwhile.
//   in-flight            an app sends 60 KB events to its agent, which reads them and never replies
//   streaming            an agent streams 4 KB fragments for several events, then replies with empty content
//   streaming-app-closes the same, the app closing its socket halfway through each batch of streams
//   sessions             an app sends events each on a new thread_id; its agent replies at once
//   log-flood            an app sends invalid and over-rate frames (the scenario leaves the rate limit on)
//   handshakes, connections-*: bench/load/abuse-sockets.ts
//   unread-*: bench/load/abuse-unread.ts
//   unfinished-frames, half-open: bench/load/abuse-door.ts
//   resume-replay, escaped-fragments, empty-fragments: bench/load/abuse-resume.ts
//   directory-*: bench/load/abuse-directory.ts
import type { WebSocket } from 'ws';
import { auth, bump, frameCode, room, until, type AbuseConfig, type AbuseResult } from './abuse-common.js';
import { runDirectory } from './abuse-directory.js';
import { runHalfOpen, runUnfinishedFrames } from './abuse-door.js';
import { runKeptFragments, runResumeReplay } from './abuse-resume.js';
import { runConnections, runHandshakes } from './abuse-sockets.js';
import { runStreamingAbuse } from './abuse-streaming.js';
import { runUnread } from './abuse-unread.js';
import { frameEventId, frameType, open } from './common.js';
import { ENDPOINT_PATHS } from '../../generated/index.js';

export type { AbuseConfig, AbuseResult, Attack } from './abuse-common.js';

/** The offender's app and agent sockets, the agent answering each event with `onEvent`. Counts every error. */
async function pair(
  cfg: AbuseConfig,
  codes: Record<string, number>,
  onEvent: (agent: WebSocket, text: string) => void,
  onApp: (text: string, type: string) => void,
) {
  const opts = { localAddress: cfg.localAddresses[0]! };
  let closing = false;
  const agent = await open(`${cfg.url}${ENDPOINT_PATHS.agent}`, auth(cfg.agent!.token), opts);
  agent.on('message', (data) => {
    const text = data.toString();
    const type = frameType(text);
    if (type === 'event') onEvent(agent, text);
    else if (type === 'error') bump(codes, `agent ${frameCode(text)}`);
  });
  agent.on('close', (code) => !closing && bump(codes, `agent close ${code}`));
  const app = await open(`${cfg.url}${ENDPOINT_PATHS.app}`, auth(cfg.apps[0]!.token), opts);
  app.on('message', (data) => {
    const text = data.toString();
    const type = frameType(text);
    if (type === 'error') bump(codes, `app ${frameCode(text)}`);
    onApp(text, type);
  });
  app.on('close', (code) => !closing && bump(codes, `app close ${code}`));
  const close = () => {
    closing = true;
    app.terminate();
    agent.terminate();
  };
  return { agent, app, close };
}

const replyTo = (agent: WebSocket, text: string) =>
  agent.send(`{"type":"reply","event_id":"${frameEventId(text)}","content":"ok","done":true}`);

/**
 * in-flight, sessions, log-flood: an app sends `count` frames as fast as its socket takes them, with at most
 * `window` awaiting their answer where given; every frame is answered once (accepted or error).
 */
async function runFrames(cfg: AbuseConfig): Promise<AbuseResult> {
  const codes: Record<string, number> = {};
  const counts: Record<string, number> = { accepted: 0, answered: 0, replies: 0, agent_events: 0 };
  const agentId = JSON.stringify(cfg.agent!.agent_id);
  const neverReply = cfg.attack === 'in-flight';
  const { app, close } = await pair(
    cfg,
    codes,
    (agent, text) => {
      counts.agent_events!++;
      if (!neverReply) replyTo(agent, text);
    },
    (_text, type) => {
      if (type === 'reply') counts.replies!++;
      else if (type === 'accepted' || type === 'error') {
        counts.answered!++;
        if (type === 'accepted') counts.accepted!++;
      }
    },
  );
  // in-flight: one fixed 60 KB frame (one thread, one session), as bytes so the offender does not re-encode it.
  const big = Buffer.from(
    `{"type":"event","agent_id":${agentId},"thread_id":"in-flight","payload":{"text":"${'x'.repeat(cfg.payloadBytes ?? 60_000)}"}}`,
  );
  const frame = (k: number): string | Buffer => {
    switch (cfg.attack) {
      case 'in-flight':
        return big;
      case 'sessions':
        return `{"type":"event","agent_id":${agentId},"thread_id":"s-${k}","payload":{"n":${k}}}`;
      default: // log-flood: half valid events (over the rate after the burst), a quarter invalid events, a quarter not JSON
        if (k % 4 < 2) return `{"type":"event","agent_id":${agentId},"thread_id":"flood","payload":{"n":${k}}}`;
        if (k % 4 === 2) return `{"type":"event","agent_id":${agentId},"thread_id":"","payload":{"n":${k}}}`;
        return `{"type":"event", not json ${k}`;
    }
  };
  const window = cfg.window ?? Infinity;
  const t0 = performance.now();
  let sent = 0;
  while (sent < cfg.count && app.readyState === app.OPEN) {
    const batchEnd = Math.min(cfg.count, sent + 256);
    for (; sent < batchEnd && sent - counts.answered! < window; sent++) app.send(frame(sent), { binary: false });
    await room(app);
  }
  await until(() => counts.answered! >= sent, 30_000);
  const durationS = (performance.now() - t0) / 1000;
  if (!neverReply) await until(() => counts.replies! >= counts.accepted!, 10_000);
  close();
  return { attack: cfg.attack, sent, duration_s: Number(durationS.toFixed(2)), codes, counts };
}

export async function runAbuse(cfg: AbuseConfig): Promise<AbuseResult> {
  if (cfg.waitForGo) {
    const alive = setInterval(() => {}, 60_000); // a signal handler alone does not keep the process waiting
    const go = new Promise((resolve) => process.once('SIGUSR2', resolve));
    console.log('WAITING');
    await go;
    clearInterval(alive);
  }
  switch (cfg.attack) {
    case 'streaming':
    case 'streaming-app-closes':
      return runStreamingAbuse(cfg);
    case 'handshakes':
      return runHandshakes(cfg);
    case 'connections-per-app':
    case 'connections-per-address':
      return runConnections(cfg);
    case 'unread-100':
    case 'unread-200':
      return runUnread(cfg);
    case 'unfinished-frames':
      return runUnfinishedFrames(cfg);
    case 'half-open':
      return runHalfOpen(cfg);
    case 'resume-replay':
      return runResumeReplay(cfg);
    case 'escaped-fragments':
    case 'empty-fragments':
      return runKeptFragments(cfg);
    case 'directory-1k':
    case 'directory-7k':
      return runDirectory(cfg);
    default:
      return runFrames(cfg);
  }
}
