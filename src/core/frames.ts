// Outgoing frames, typed by the generated message types. Payloads travel as the JSON text they arrived in:
// spliced into the frame rather than parsed and serialised again.
import type {
  AcceptedMessage,
  AgentsMessage,
  CancelToAgentMessage,
  ErrorCode,
  ErrorMessage,
  ErrorToAgentMessage,
  EventToAgentMessage,
  PongMessage,
  ReplyMessage,
  TokenMessage,
} from '../../generated/index.js';
import { LIMITS } from '../../generated/index.js';
import { fitList } from './fitted-list.js';

/** The UTF-8 bytes of a text: what the spec's byte limits count. */
export const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8');

export const PONG = JSON.stringify({ type: 'pong' } satisfies PongMessage);

/** A frame whose last field is a payload already serialised as JSON. */
function withPayload(head: object, payloadJson: string, tail?: object): string {
  const body = JSON.stringify(head);
  const after = tail ? `,${JSON.stringify(tail).slice(1, -1)}` : '';
  return `${body.slice(0, -1)},"payload":${payloadJson}${after}}`;
}

export function appError(
  code: ErrorCode,
  error: string,
  extra: Omit<ErrorMessage, 'type' | 'code' | 'error'> = {},
): string {
  return JSON.stringify({ type: 'error', ...extra, error, code } satisfies ErrorMessage);
}

export function agentError(code: ErrorCode, error: string, eventId?: string): string {
  const frame: ErrorToAgentMessage = eventId
    ? { type: 'error', event_id: eventId, error, code }
    : { type: 'error', error, code };
  return JSON.stringify(frame);
}

/** The app cancelled the event (S4): only to an agent connection opened with `?cancel=1`. */
export function cancelToAgent(eventId: string): string {
  return JSON.stringify({ type: 'cancel', event_id: eventId } satisfies CancelToAgentMessage);
}

/** `resumeToken` only on a resumable connection (R2): any other connection gets the frame as before. */
export function accepted(eventId: string, agentId: string, sessionKey: string, resumeToken?: string): string {
  const frame: AcceptedMessage = {
    type: 'accepted',
    event_id: eventId,
    agent_id: agentId,
    session_key: sessionKey,
    status: 'accepted',
  };
  if (resumeToken !== undefined) frame.resume_token = resumeToken;
  return JSON.stringify(frame);
}

export function eventToAgent(e: Omit<EventToAgentMessage, 'type' | 'payload'>, payloadJson: string): string {
  return withPayload({ type: 'event', ...e } satisfies Omit<EventToAgentMessage, 'payload'>, payloadJson);
}

/** How every `token` frame starts: what tells a fragment from the frame that ends an event. */
export const TOKEN_FRAME_START = `${JSON.stringify({ type: 'token' }).slice(0, -1)},`;

/**
 * A `token` frame is the one sent per fragment, so everything but the fragment is serialised once per event:
 * `tokenFrame(tokenPrefix(eventId, agentId), fragment)`.
 */
export function tokenPrefix(eventId: string, agentId: string): string {
  const empty = JSON.stringify({
    type: 'token',
    event_id: eventId,
    agent_id: agentId,
    token: '',
  } satisfies TokenMessage);
  return empty.slice(0, -'""}'.length);
}

export function tokenFrame(prefix: string, fragment: string): string {
  return `${prefix}${JSON.stringify(fragment)}}`;
}

/** The `token` frame of a resumable event (R3): the fragment as its JSON text (what is kept of it), and its `seq`. */
export function seqTokenFrame(prefix: string, fragmentJson: string, seq: number): string {
  return `${prefix}${fragmentJson},"seq":${seq}}`;
}

/**
 * The reply text arrives as its JSON string (`JSON.stringify(text)`): the bridge measures that against
 * replyContentMaxBytes before it builds the frame (L16), so a text of up to a megabyte is serialised once.
 */
export function reply(
  r: Omit<ReplyMessage, 'type' | 'reply' | 'payload' | 'metadata'>,
  replyJson: string,
  payloadJson: string,
  metadata: ReplyMessage['metadata'],
): string {
  const head = JSON.stringify({ type: 'reply', ...r } satisfies Omit<ReplyMessage, 'reply' | 'payload' | 'metadata'>);
  return `${head.slice(0, -1)},"reply":${replyJson},"payload":${payloadJson},"metadata":${JSON.stringify(metadata)}}`;
}

/** `{"type":"agents","agents":`: what comes before the list. */
const AGENTS_HEAD = JSON.stringify({ type: 'agents', agents: [] } satisfies AgentsMessage).slice(0, -'[]}'.length);
/** `,"incomplete":true`: what follows a list that left agents out. */
const INCOMPLETE = `,${JSON.stringify({ incomplete: true } satisfies Pick<AgentsMessage, 'incomplete'>).slice(1, -1)}`;

/**
 * The answer to `discover`, at most frameMaxBytes (W13): the agents in the order given while they fit, and
 * `incomplete: true` when some did not (the app reads the rest from the HTTP directory, after the last one listed).
 */
export function agents(list: Iterable<AgentsMessage['agents'][number]>): string {
  const { items, complete } = fitList(list, LIMITS.frameMaxBytes - AGENTS_HEAD.length - '}'.length, INCOMPLETE.length);
  return `${AGENTS_HEAD}[${items.join(',')}]${complete ? '' : INCOMPLETE}}`;
}
