// Attacks streaming and streaming-app-closes: one agent streams 4 KB fragments as fast as its socket takes them
// for `stream.concurrency` events at a time, `stream.bytesPerEvent` each, then replies with empty content (so the
// bridge would have to have kept it all: L14 says it stops at streamedTextMaxBytes and answers REPLY_TOO_LARGE).
// The app reads everything. In streaming-app-closes the app drops its socket (no close handshake, as a crashed
// client would) once the first stream is 500 KB in, still under the per-event bound, so that what frees the kept
// text is the app leaving (L15); the agent goes on regardless, and each batch opens a new app socket.
import type { WebSocket } from 'ws';
import { auth, bump, frameCode, room, until, type AbuseConfig, type AbuseResult } from './abuse-common.js';
import { frameEventId, frameType, open } from './common.js';
import { ENDPOINT_PATHS } from '../../generated/index.js';

/** Under tokenFragmentMaxBytes (4096) with room to spare: the largest fragment the bridge forwards. */
const FRAGMENT = 'y'.repeat(4000);

interface Stream {
  eventId: string;
  sent: number;
  prefix: string;
}

export async function runStreamingAbuse(cfg: AbuseConfig): Promise<AbuseResult> {
  const { concurrency, bytesPerEvent } = cfg.stream!;
  const closes = cfg.attack === 'streaming-app-closes';
  const opts = { localAddress: cfg.localAddresses[0]! };
  const codes: Record<string, number> = {};
  const counts: Record<string, number> = {
    events: 0,
    tokens_sent: 0,
    tokens_received: 0,
    token_bytes_received: 0,
    replies: 0,
    agent_answers: 0,
  };
  let stopping = false;
  const waiting: Stream[] = []; // events delivered to the agent, not yet streamed
  const agent = await open(`${cfg.url}${ENDPOINT_PATHS.agent}`, auth(cfg.agent!.token), opts);
  agent.on('message', (data) => {
    const text = data.toString();
    const type = frameType(text);
    if (type === 'event') {
      const eventId = frameEventId(text)!;
      waiting.push({ eventId, sent: 0, prefix: `{"type":"token","event_id":"${eventId}","token":"` });
    } else if (type === 'error') {
      counts.agent_answers!++;
      bump(codes, `agent ${frameCode(text)}`);
    }
  });
  agent.on('close', (code) => !stopping && bump(codes, `agent close ${code}`));
  const fragmentFrame = (s: Stream) => `${s.prefix}${FRAGMENT}"}`;

  let app: WebSocket | undefined;
  let appAnswers = 0;
  let appRefusals = 0;
  let closingApp = false;
  const openApp = async () => {
    const ws = await open(`${cfg.url}${ENDPOINT_PATHS.app}`, auth(cfg.apps[0]!.token), opts);
    ws.on('message', (data) => {
      const text = data.toString();
      const type = frameType(text);
      if (type === 'token') {
        counts.tokens_received!++;
        counts.token_bytes_received! += text.length; // ASCII: characters are bytes
      } else if (type === 'reply') {
        counts.replies!++;
        appAnswers++;
      } else if (type === 'error') {
        bump(codes, `app ${frameCode(text)}`);
        appAnswers++;
        if (frameCode(text) === 'REPLY_TOO_LARGE') appRefusals++;
      }
    });
    ws.on('close', (code) => !stopping && ws === app && !closingApp && bump(codes, `app close ${code}`));
    return ws;
  };

  const t0 = performance.now();
  for (let batch = 0; counts.events! < cfg.count; batch++) {
    if (!app || app.readyState !== app.OPEN) {
      closingApp = false;
      app = await openApp();
    }
    const n = Math.min(concurrency, cfg.count - counts.events!);
    appAnswers = 0;
    appRefusals = 0;
    const answersBefore = counts.agent_answers!;
    for (let i = 0; i < n; i++)
      app.send(
        JSON.stringify({
          type: 'event',
          agent_id: cfg.agent!.agent_id,
          thread_id: `stream-${batch}-${i}`,
          payload: { text: 'tell me everything' },
        }),
      );
    counts.events! += n;
    if (!(await until(() => waiting.length >= n, 10_000)))
      throw new Error(`only ${waiting.length} of ${n} events reached the agent`);
    const streams = waiting.splice(0, n);
    // Round-robin over the batch's streams, a fragment each per turn, until each has sent its share.
    while (streams.some((s) => s.sent < bytesPerEvent) && agent.readyState === agent.OPEN) {
      for (const s of streams) {
        if (s.sent >= bytesPerEvent) continue;
        agent.send(fragmentFrame(s));
        s.sent += FRAGMENT.length;
        counts.tokens_sent!++;
      }
      if (closes && !closingApp && streams[0]!.sent >= Math.min(bytesPerEvent / 2, 500_000)) {
        closingApp = true;
        app.terminate();
      }
      if (counts.tokens_sent! % 64 === 0) await room(agent);
    }
    for (const s of streams) agent.send(`{"type":"reply","event_id":"${s.eventId}","content":"","done":true}`);
    // The app answers each event once (reply or error) unless it left; the agent hears only of refused replies.
    // A refused reply reaches both; the agent's copy may come after the app's.
    if (!closingApp) await until(() => appAnswers >= n && counts.agent_answers! - answersBefore >= appRefusals, 30_000);
    else await until(() => counts.agent_answers! - answersBefore >= n, 1000);
  }
  const durationS = (performance.now() - t0) / 1000;
  stopping = true;
  app?.terminate();
  agent.terminate();
  return { attack: cfg.attack, sent: counts.tokens_sent!, duration_s: Number(durationS.toFixed(2)), codes, counts };
}
