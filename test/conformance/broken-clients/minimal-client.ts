// A minimal, independent client of the bridge protocol (spec §2, §4 rules 4-5, §5, §8), written from the spec with
// nothing but `ws`: it proves the client role's scenarios can be passed by a client that shares no code with our
// SDKs, and (with --break RULE) that each rule the scenarios judge is really judged.
//
//   npx tsx test/conformance/broken-clients/minimal-client.ts --role app|agent [--break RULE]
//
// Without --break it keeps the whole client contract of the client role (conformance/README.md, "Client role").
// Each RULE breaks exactly one rule and keeps the rest: see BREAKS below.
import WebSocket from 'ws';

const BREAKS = [
  'no-ping',
  'ignore-dead',
  'no-backoff',
  'no-cap',
  'no-reset',
  'hammer-refused',
  'no-reconnect',
  'strict-types',
  'token-in-payload',
  'close-on-error',
  'resend-at-once',
  'fight-replacement',
  'two-connections',
  'forget-after-reconnect',
  'big-fragment',
  'exit-at-once',
  'ignore-scale',
] as const;
type Break = (typeof BREAKS)[number];

const argv = process.argv.slice(2);
const option = (name: string) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const role = option('--role');
const broken = option('--break') as Break | undefined;
const url = process.env.BRIDGE_URL;
const token = process.env.BRIDGE_TOKEN;
if ((role !== 'app' && role !== 'agent') || (broken !== undefined && !BREAKS.includes(broken)) || !url || !token) {
  console.error(`usage: BRIDGE_URL=… BRIDGE_TOKEN=… minimal-client.ts --role app|agent [--break ${BREAKS.join('|')}]`);
  process.exit(2);
}
const breaks = (rule: Break) => broken === rule;
if (breaks('exit-at-once')) {
  console.error('minimal-client: giving up on purpose');
  process.exit(3);
}

// The harness's BRIDGE_TIME_SCALE runs the protocol's heartbeat and backoff K times faster (K = 1 without it).
const K = breaks('ignore-scale') ? 1 : Number(process.env.BRIDGE_TIME_SCALE ?? 1);
const PING_EVERY_MS = 30_000 / K; // §4 rule 4
const PONG_WITHIN_MS = 5_000 / K; // §4 rule 4
const BASE_DELAY_MS = 1_000 / K; // §4 rule 5: start at 1 s, doubling…
const MAX_DELAY_MS = 60_000 / K; // …up to a cap of 60 s
const FRAGMENT_MAX_BYTES = 4096; // §8: each agent `token`
/** Close codes after which retrying cannot help (the token is bad) and the one for a newer connection of ours. */
const REFUSED = new Set([4401, 4410]);
const REPLACED = 4409;
/** What the bridge may send us (spec §2.2, §2.3): anything else is a newer protocol's and is ignored. */
const KNOWN: Record<string, string[]> =
  role === 'app'
    ? {
        accepted: ['event_id', 'agent_id', 'session_key', 'status'],
        token: ['event_id', 'agent_id', 'token'],
        reply: ['event_id', 'agent_id', 'thread_id', 'reply', 'payload', 'metadata'],
        error: ['event_id', 'agent_id', 'error', 'code', 'metadata'],
        agents: ['agents'],
        pong: [],
      }
    : {
        event: ['event_id', 'app_id', 'thread_id', 'session_key', 'payload'],
        error: ['event_id', 'error', 'code'],
        pong: [],
      };

const log = (line: string) => console.error(`minimal-client(${role}${broken ? `, --break ${broken}` : ''}): ${line}`);
/** Failed attempts since the backoff last restarted: the next delay is 1 s × 2^failures. */
let failures = 0;
let opened = 0;
let eventSent = false;
/** With --break close-on-error: the connection was closed on an error, and is not reopened. */
let closedOnPurpose = false;

// Nothing else may hold the process open while it waits between attempts or after giving up: it runs until stopped.
setInterval(() => {}, 1 << 30);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0));

function nextDelay(): number {
  if (breaks('no-backoff')) return 10;
  const exponential = BASE_DELAY_MS * 2 ** failures++;
  const capped = breaks('no-cap') ? exponential : Math.min(exponential, MAX_DELAY_MS);
  // Symmetric ±20 % jitter, so that clients of a restarted bridge do not all come back at the same instant.
  return Math.round(capped * (0.8 + Math.random() * 0.4));
}

function reconnectLater(): void {
  const delay = nextDelay();
  log(`reconnecting in ${delay} ms`);
  setTimeout(connect, delay);
}

function connect(): void {
  // The token goes in the handshake's header only, never in a frame (§5 rule 3).
  const ws = new WebSocket(`${url}/ws/${role}`, { headers: { authorization: `Bearer ${token}` } });
  const send = (frame: Record<string, unknown>) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(frame));
  let number = 0;
  let pinger: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;

  ws.on('open', () => {
    number = ++opened;
    log(`connection ${number} open`);
    pinger = setInterval(() => {
      if (breaks('no-ping')) return;
      send({ type: 'ping' });
      // No pong within 5 s: the connection is dead even if TCP has not noticed; drop it, which reconnects.
      if (!breaks('ignore-dead'))
        deadline ??= setTimeout(() => {
          log('no pong: dropping a dead connection');
          ws.terminate();
        }, PONG_WITHIN_MS);
    }, PING_EVERY_MS);
    if (role === 'app' && !eventSent) {
      eventSent = true;
      sendEvent();
    }
    if (breaks('two-connections') && number === 1) connect();
  });

  function sendEvent(): void {
    const payload: Record<string, unknown> = { text: 'hello' };
    if (breaks('token-in-payload')) payload.token = token;
    send({ type: 'event', agent_id: 'echo-agent', thread_id: 'conformance', payload });
  }

  ws.on('message', (data, isBinary) => {
    let frame: Record<string, any> | undefined;
    try {
      frame = isBinary ? undefined : JSON.parse(data.toString());
    } catch {
      /* handled below */
    }
    if (!frame || typeof frame !== 'object') return log('ignored a frame that is not a JSON object');
    const known = Object.hasOwn(KNOWN, frame.type) ? KNOWN[frame.type] : undefined;
    const unknownFields = known ? Object.keys(frame).filter((k) => k !== 'type' && !known.includes(k)) : [];
    if (!known || unknownFields.length) {
      // A newer bridge may add message types and fields (forward compatibility): ignore them, keep the connection.
      log(
        `ignoring unknown ${known ? `fields ${unknownFields.join(', ')} of ${frame.type}` : `message type ${frame.type}`}`,
      );
      if (breaks('strict-types')) return ws.close(1003, 'unknown message');
      if (!known) return;
    }
    if (frame.type === 'pong') {
      clearTimeout(deadline);
      deadline = undefined;
      // A ping answered: the bridge is really up again, so the next outage starts over at 1 s.
      if (!breaks('no-reset')) failures = 0;
    } else if (frame.type === 'error' && frame.event_id === undefined && frame.agent_id === undefined) {
      log(`error ${frame.code}: ${frame.error}`); // about the connection, not an event: a close follows if it ends
    } else if (role === 'agent' && frame.type === 'event') {
      if (breaks('forget-after-reconnect') && number > 1) return;
      answer(frame);
    } else if (role === 'app' && frame.type === 'reply') {
      console.log(frame.reply);
    } else if (role === 'app' && frame.type === 'error') {
      // Errors stop processing of the event (§7); the connection stays usable, so keep it and keep running.
      console.log(`error ${frame.code}: ${frame.error}`);
      // Broken: the error ends the whole connection, not just the event (and it does not come back).
      if (breaks('close-on-error')) {
        closedOnPurpose = true;
        return ws.close(1000, 'error');
      }
      if (breaks('resend-at-once')) setTimeout(sendEvent, 50);
      // We never resend: the event was a one-off, and RATE_LIMIT_EXCEEDED's retry_after_seconds is thereby kept.
    }
  });

  /** Echoes the event's text as tokens of at most 4096 UTF-8 bytes, then one reply (§2.3, §8). */
  function answer(event: Record<string, any>): void {
    const payload = event.payload ?? {};
    const text = `You said: ${typeof payload.text === 'string' ? payload.text : JSON.stringify(payload)}`;
    for (const piece of breaks('big-fragment') ? [text] : fragments(text))
      send({ type: 'token', event_id: event.event_id, token: piece });
    // Content may be empty: the bridge joins the streamed fragments.
    send({ type: 'reply', event_id: event.event_id, content: breaks('token-in-payload') ? token : '', done: true });
  }

  ws.on('error', (err) => log(`connection error: ${err.message}`)); // 'close' always follows
  ws.on('close', (code, reason) => {
    clearInterval(pinger);
    clearTimeout(deadline);
    log(`connection closed: ${code} ${reason.toString()}`);
    if (REFUSED.has(code)) {
      // Our token is wrong, rotated out or revoked: retrying cannot help, so stay idle until stopped.
      if (breaks('hammer-refused')) return void setTimeout(connect, 10);
      return log('the bridge refused our token: giving up (running idle until stopped)');
    }
    if (code === REPLACED && !breaks('fight-replacement'))
      return log('another connection with our token replaced this one: not reconnecting');
    if (number > 0 && breaks('no-reconnect')) return log('not reconnecting');
    if (closedOnPurpose) return log('closed on an error: not reconnecting');
    reconnectLater();
  });
}

/** Splits text into pieces of at most FRAGMENT_MAX_BYTES UTF-8 bytes, never inside a character. */
function fragments(text: string): string[] {
  const pieces: string[] = [];
  let piece = '';
  let bytes = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > FRAGMENT_MAX_BYTES) {
      pieces.push(piece);
      piece = '';
      bytes = 0;
    }
    piece += char;
    bytes += size;
  }
  return piece ? [...pieces, piece] : pieces;
}

connect();
