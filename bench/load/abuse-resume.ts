// Attacks on what the bridge keeps for resumes (the resume extension: apps connected with ?resume=1, R1-R9).
//   resume-replay      an app's event is streamed `stream.bytesPerEvent` of text in fragments of `fragment` and
//                      replied to; then, on a new resumable connection, the app resumes it from the start
//                      (after_seq 0) again and again, `window` replays asked at a time (each further one once a
//                      replay's reply came), for `timeS` or `count` resumes: ~130 bytes in, the whole stream out
//                      (the replays on a raw socket that counts bytes, so that the offender is not the bound)
//   escaped-fragments  `apps` resumable apps (each reading everything) send `count` events in all to one agent,
//                      which streams fragments of `fragment` (4096 x U+0001: 4096 bytes counted, six times that
//                      as JSON) round-robin until each event has `stream.bytesPerEvent` counted or `timeS` passed;
//                      held `holdS` in flight, then replied to
//   empty-fragments    one resumable app sends `stream.concurrency` events; the agent streams `count` empty
//                      fragments round-robin over them (or for `timeS`); held `holdS`; then a new connection
//                      resumes the first event from after_seq 0, to see whether its first fragment is still kept;
//                      then every event is replied to
// The agent sends no further ahead of what the apps received than a few MiB of frames, so that the apps (in this
// process, sharing its event loop) keep up and are not closed as slow consumers: the bridge is made to keep and
// forward everything, as for a client that reads.
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebSocket } from 'ws';
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

interface ResumableApp {
  ws: WebSocket;
  /** accepted frames' event_id -> resume_token, in the order they came. */
  accepted: Map<string, string>;
  finals: number;
  onToken?: (frame: Buffer) => void;
}

/** Where a frame's type starts: the bridge writes `{"type":"` first. */
const TYPE_AT = '{"type":"'.length;
const TOKEN_INITIAL = 't'.charCodeAt(0);
/** Bytes of the agent's frames it may have sent ahead of what the apps received: the bridge's frames to the apps
 * are larger (agent_id, seq; twice the size for an empty fragment), and must stay under sendBufferMaxBytes. */
const AHEAD_BYTES = 2 ** 20;

/** The offender's agent, collecting the events it is sent; counts its errors. */
async function openAgent(cfg: AbuseConfig, codes: Record<string, number>, stopping: () => boolean) {
  const events: string[] = [];
  const state = { errors: 0 };
  const ws = await open(`${cfg.url}${ENDPOINT_PATHS.agent}`, auth(cfg.agent!.token), {
    localAddress: cfg.localAddresses[0]!,
  });
  ws.on('message', (data) => {
    const text = data.toString();
    const type = frameType(text);
    if (type === 'event') events.push(frameEventId(text)!);
    else if (type === 'error') {
      state.errors++;
      bump(codes, `agent ${frameCode(text)}`);
    }
  });
  ws.on('close', (code) => !stopping() && bump(codes, `agent close ${code}`));
  return { ws, events, errors: () => state.errors };
}

/** A resumable app connection that reads everything, counting frames and bytes into `counts`. */
async function openResumable(
  cfg: AbuseConfig,
  token: string,
  codes: Record<string, number>,
  counts: Record<string, number>,
  stopping: () => boolean,
): Promise<ResumableApp> {
  const ws = await open(`${cfg.url}${ENDPOINT_PATHS.app}?resume=1`, auth(token), {
    localAddress: cfg.localAddresses[0]!,
  });
  const app: ResumableApp = { ws, accepted: new Map(), finals: 0 };
  ws.on('message', (data) => {
    const bytes = data as Buffer;
    counts.bytes_received! += bytes.length;
    // `{"type":"token"`: told by one byte, not decoded (replays are millions of frames).
    if (bytes[TYPE_AT] === TOKEN_INITIAL) {
      counts.tokens_received!++;
      if (app.onToken) app.onToken(bytes);
      return;
    }
    const text = bytes.toString();
    const type = frameType(text);
    if (type === 'token') counts.tokens_received!++;
    else if (type === 'accepted') {
      const { event_id, resume_token } = JSON.parse(text) as { event_id: string; resume_token?: string };
      if (resume_token) app.accepted.set(event_id, resume_token);
      else bump(codes, 'app accepted without resume_token');
    } else if (type === 'reply') {
      app.finals++;
      counts.replies!++;
    } else if (type === 'error') {
      app.finals++;
      bump(codes, `app ${frameCode(text)}`);
    }
  });
  ws.on('close', (code) => !stopping() && bump(codes, `app close ${code}`));
  return app;
}

const newCounts = (): Record<string, number> => ({ tokens_received: 0, bytes_received: 0, replies: 0 });
const eventFrame = (cfg: AbuseConfig, thread: string) =>
  JSON.stringify({
    type: 'event',
    agent_id: cfg.agent!.agent_id,
    thread_id: thread,
    payload: { text: 'tell me everything' },
  });
const tokenFrame = (eventId: string, fragment: string) =>
  `{"type":"token","event_id":"${eventId}","token":${JSON.stringify(fragment)}}`;

/**
 * Sends `perEvent` fragments to every event, round-robin, until done or `deadline`, no more than AHEAD_BYTES of
 * frames ahead of those through (`received()`: received by the apps or refused); returns the fragments sent.
 */
async function streamRoundRobin(
  agent: WebSocket,
  events: string[],
  fragment: string,
  perEvent: number,
  deadline: number,
  received: () => number,
  appsOpen: () => boolean,
): Promise<number> {
  const frames = events.map((id) => tokenFrame(id, fragment));
  const ahead = Math.max(256, Math.floor(AHEAD_BYTES / Buffer.byteLength(frames[0]!)));
  const total = perEvent * frames.length;
  let sent = 0;
  while (sent < total && performance.now() < deadline && agent.readyState === agent.OPEN) {
    const end = Math.min(total, sent + 256);
    for (; sent < end; sent++) agent.send(frames[sent % frames.length]!);
    await room(agent);
    while (sent - received() > ahead && appsOpen() && performance.now() < deadline) await sleep(1);
  }
  return sent;
}

export async function runResumeReplay(cfg: AbuseConfig): Promise<AbuseResult> {
  const codes: Record<string, number> = {};
  const counts = newCounts();
  let stopping = false;
  const agent = await openAgent(cfg, codes, () => stopping);
  const first = await openResumable(cfg, cfg.apps[0]!.token, codes, counts, () => stopping);
  first.ws.send(eventFrame(cfg, 'replay'));
  if (!(await until(() => agent.events.length > 0 && first.accepted.size > 0, 10_000)))
    throw new Error('the event did not reach the agent');
  const eventId = agent.events[0]!;
  const fragment = cfg.fragment ?? 'z'.repeat(100);
  const perEvent = Math.floor((cfg.stream?.bytesPerEvent ?? 900_000) / Buffer.byteLength(fragment));
  for (let k = 0; k < perEvent; k++) {
    agent.ws.send(tokenFrame(eventId, fragment));
    if ((k + 1) % 256 === 0) await room(agent.ws);
  }
  agent.ws.send(`{"type":"reply","event_id":"${eventId}","content":"done","done":true}`);
  if (!(await until(() => first.finals > 0, 30_000))) throw new Error('the streamed event got no reply');
  first.ws.removeAllListeners('close');
  first.ws.close();

  // The replays: on a new connection, as R4 has it, the ended event from its first fragment, again and again.
  const resumeFrame = JSON.stringify({
    type: 'resume',
    event_id: eventId,
    resume_token: first.accepted.get(eventId)!,
    after_seq: 0,
  });
  const t0 = performance.now();
  const replay = await replayRaw(cfg, resumeFrame, t0 + (cfg.timeS ?? 30) * 1000, codes);
  const durationS = secondsSince(t0);
  stopping = true;
  agent.ws.terminate();
  return {
    attack: cfg.attack,
    sent: replay.resumes,
    duration_s: durationS,
    codes,
    counts: { stream_fragments: perEvent, stream_bytes: counts.bytes_received!, ...replay },
  };
}

const REPLY_START = Buffer.from('{"type":"reply"');
const ERROR_START = Buffer.from('{"type":"error"');

/** How many times `needle` occurs in `haystack`, and where. */
function find(haystack: Buffer, needle: Buffer): number[] {
  const at: number[] = [];
  for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + needle.length)) at.push(i);
  return at;
}

/**
 * The replays, on a raw socket that counts the bytes and finds each replay's reply by its first bytes without
 * decoding the frames (a WebSocket library parsing millions of small frames made the offender, not the bridge,
 * the bound on how fast it went): `window` replays asked at a time, until `deadline` or `count`.
 */
async function replayRaw(cfg: AbuseConfig, resumeFrame: string, deadline: number, codes: Record<string, number>) {
  const socket = await rawUpgrade(
    cfg.url,
    `${ENDPOINT_PATHS.app}?resume=1`,
    cfg.apps[0]!.token,
    cfg.localAddresses[0]!,
  );
  const frame = clientFrame(Buffer.from(resumeFrame));
  const window = cfg.window ?? 1;
  let tail: Buffer = Buffer.alloc(0);
  let bytesOut = 0;
  let replies = 0;
  let errors = 0;
  let open = true;
  socket.on('data', (chunk: Buffer) => {
    bytesOut += chunk.length;
    const b = tail.length ? Buffer.concat([tail, chunk]) : chunk;
    replies += find(b, REPLY_START).length;
    for (const i of find(b, ERROR_START)) {
      errors++;
      bump(codes, `app ${frameCode(b.subarray(i, i + 400).toString())}`);
    }
    tail = b.subarray(Math.max(0, b.length - REPLY_START.length + 1));
  });
  socket.on('error', (err) => bump(codes, `app ${(err as NodeJS.ErrnoException).code ?? err.message.slice(0, 40)}`));
  socket.once('close', () => {
    open = false;
    bump(codes, 'app connection closed by the bridge');
  });
  let resumes = 0;
  while (resumes < cfg.count && performance.now() < deadline && open) {
    socket.write(frame);
    resumes++;
    if (!(await until(() => resumes - replies - errors < window || !open, 30_000))) break;
  }
  await until(() => replies + errors >= resumes || !open, 30_000);
  socket.removeAllListeners('close');
  socket.destroy();
  return {
    resumes,
    replays_complete: replies,
    resumes_refused: errors,
    bytes_in: resumes * frame.length,
    bytes_out: bytesOut,
  };
}

/** escaped-fragments and empty-fragments: resumable apps, one agent streaming to all their events. */
export async function runKeptFragments(cfg: AbuseConfig): Promise<AbuseResult> {
  const codes: Record<string, number> = {};
  const counts = newCounts();
  let stopping = false;
  const agent = await openAgent(cfg, codes, () => stopping);
  const apps: ResumableApp[] = [];
  for (const a of cfg.apps) apps.push(await openResumable(cfg, a.token, codes, counts, () => stopping));
  const escaped = cfg.attack === 'escaped-fragments';
  const eventCount = escaped ? cfg.count : (cfg.stream?.concurrency ?? 1);
  for (let i = 0; i < eventCount; i++) apps[i % apps.length]!.ws.send(eventFrame(cfg, `kept-${i}`));
  if (!(await until(() => agent.events.length >= eventCount, 10_000)))
    throw new Error(`only ${agent.events.length} of ${eventCount} events reached the agent`);
  const fragment = cfg.fragment ?? '';
  const fragmentBytes = Buffer.byteLength(fragment);
  const perEvent = escaped
    ? Math.floor((cfg.stream?.bytesPerEvent ?? 975_000) / Math.max(1, fragmentBytes))
    : Math.ceil(cfg.count / eventCount);
  const t0 = performance.now();
  const appsOpen = () => apps.some((a) => a.ws.readyState === a.ws.OPEN);
  // A fragment the bridge refuses (an error to the agent) reaches no app: it counts as through, for the pace.
  const through = () => counts.tokens_received! + agent.errors();
  const sent = await streamRoundRobin(
    agent.ws,
    agent.events,
    fragment,
    perEvent,
    t0 + (cfg.timeS ?? 60) * 1000,
    through,
    appsOpen,
  );
  // Until every fragment reached its app (or 30 s): what the bridge keeps is then all it was sent.
  await until(() => through() >= sent || !appsOpen(), 30_000);
  const durationS = secondsSince(t0);
  await sleep((cfg.holdS ?? 3) * 1000); // the scenario samples the bridge holding it all
  const replayed = escaped ? {} : await replayFirst(cfg, apps[0]!, codes, () => stopping);
  for (const id of agent.events) agent.ws.send(`{"type":"reply","event_id":"${id}","content":"done","done":true}`);
  await until(() => apps.reduce((n, a) => n + a.finals, 0) >= agent.events.length, 10_000);
  stopping = true;
  for (const a of apps) a.ws.terminate();
  agent.ws.terminate();
  return {
    attack: cfg.attack,
    sent,
    duration_s: durationS,
    codes,
    counts: {
      apps: apps.length,
      events: agent.events.length,
      fragments_sent: sent,
      bytes_counted: sent * fragmentBytes,
      agent_bytes_sent: sent * Buffer.byteLength(tokenFrame(agent.events[0]!, fragment)),
      ...counts,
      ...replayed,
    },
  };
}

/**
 * Resumes `app`'s first event from after_seq 0 on a new connection: the `seq` of the first fragment the bridge
 * sends back (1: it kept the stream from its start), and the fragments that came within 3 s.
 */
async function replayFirst(
  cfg: AbuseConfig,
  app: ResumableApp,
  codes: Record<string, number>,
  stopping: () => boolean,
): Promise<Record<string, number>> {
  const [eventId, token] = app.accepted.entries().next().value as [string, string];
  const counts = newCounts();
  const replay = await openResumable(cfg, cfg.apps[0]!.token, codes, counts, stopping);
  let firstSeq: number | undefined;
  replay.onToken = (frame) => (firstSeq ??= Number(/"seq":(\d+)/.exec(frame.toString())?.[1] ?? -1));
  replay.ws.send(JSON.stringify({ type: 'resume', event_id: eventId, resume_token: token, after_seq: 0 }));
  await until(() => firstSeq !== undefined || replay.finals > 0 || replay.ws.readyState !== replay.ws.OPEN, 10_000);
  await sleep(3000);
  replay.ws.removeAllListeners('close');
  replay.ws.terminate();
  return { replay_first_seq: firstSeq ?? 0, replay_fragments_in_3s: counts.tokens_received! };
}
