// A `resume` frame judged against what this node keeps (R4-R6): refused (R5, about the frame), a gap (R6, the end
// of the event for the app), or the frames to send again. The bridge then sends them and hands the event in flight
// to the resuming connection; this file decides, the bridge does.
import { createHash, randomFillSync, timingSafeEqual } from 'node:crypto';
import { describeErrors, type ResumeMessage } from '../../generated/index.js';
import { errorText } from '../shared/error-text.js';
import * as frames from './frames.js';
import type { DropReason, KeptStream } from './kept-stream.js';
import type { ResumeBounds, ResumeStore } from './resume-store.js';

const TOKEN_BYTES = 32;
/** Tokens' random bytes are fetched this many tokens at a time: one system call per event showed under load. */
const POOL_TOKENS = 128;
const pool = Buffer.alloc(TOKEN_BYTES * POOL_TOKENS);
let poolNext = pool.length;

/** A new resume token (R2: 256 random bits, base64url) and the SHA-256 the bridge keeps of it (base64: a string is
 * a third of a Buffer's heap, per event). */
export function newResumeToken(): { token: string; hash: string } {
  if (poolNext === pool.length) {
    randomFillSync(pool);
    poolNext = 0;
  }
  const token = pool.toString('base64url', poolNext, (poolNext += TOKEN_BYTES));
  return { token, hash: hashResumeToken(token) };
}

export const hashResumeToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('base64');

/** Whether `token` is the one whose SHA-256 is `hash`, in constant time. */
const tokenMatches = (token: string, hash: string) =>
  timingSafeEqual(Buffer.from(hashResumeToken(token), 'base64'), Buffer.from(hash, 'base64'));

export type ResumeVerdict =
  /** An `error` about the frame; the event goes on for whoever holds it. */
  | { outcome: 'refused'; frame: string }
  /** RESUME_GAP: the event is over for the app; `stream` is the kept one, if any, to let go of. */
  | { outcome: 'gap'; frame: string; stream?: KeptStream }
  /** The fragments after `after_seq` (token frames, in order), then the final frame if the event has ended. */
  | { outcome: 'resumed'; stream: KeptStream; frames: string[] };

/** What this node knows of an event it does not keep for resumes: in flight here, for which app. */
export type InFlightHere = (eventId: string) => { appId: string } | undefined;

/** Judges a `resume` from a connection of `appId` against the streams kept on this node. */
export function judgeResume(
  store: ResumeStore,
  bounds: ResumeBounds,
  appId: string,
  message: ResumeMessage,
  inFlightHere: InFlightHere,
): ResumeVerdict {
  const { event_id, resume_token, after_seq } = message;
  const stream = store.get(event_id);
  // Another app's event gets exactly the answer of an event that does not exist (R5): whether it is live, kept or
  // not, is nobody else's business, and no other answer, nor the work done for it, may tell them apart.
  const unknown = () => gap(errorText('RESUME_GAP', 'unknown', { event_id }), event_id);
  if (!stream) {
    const other = inFlightHere(event_id);
    if (!other || other.appId !== appId) return unknown();
    return refused(errorText('RESUME_REFUSED', 'not_resumable', { event_id }), event_id);
  }
  if (stream.appId !== appId) return unknown();
  if (!tokenMatches(resume_token, stream.tokenHash))
    return refused(errorText('RESUME_REFUSED', 'not_yours', { event_id }), event_id);
  if (stream.cancelled) return gap(errorText('RESUME_GAP', 'cancelled', { event_id }), event_id, stream.agentId);
  const { fragments } = stream;
  if (after_seq > fragments.sent) {
    return refused(errorText('RESUME_REFUSED', 'ahead', { event_id, sent: fragments.sent, after_seq }), event_id);
  }
  if (stream.gapped || after_seq + 1 < fragments.firstKept || stream.final === null) {
    const why = whyDropped(stream.dropped, bounds);
    return {
      ...gap(
        errorText('RESUME_GAP', 'overflow', { event_id, after_seq, first_kept: fragments.firstKept, why }),
        event_id,
        stream.agentId,
      ),
      stream,
    };
  }
  const prefix = frames.tokenPrefix(stream.eventId, stream.agentId);
  const out: string[] = [];
  for (const [seq, json] of fragments.after(after_seq)) out.push(frames.seqTokenFrame(prefix, json, seq));
  const final = stream.finalFrame();
  if (final !== undefined) out.push(final);
  return { outcome: 'resumed', stream, frames: out };
}

/** A resume on a connection opened without ?resume=1 is what it was before the extension: an unknown message (R1). */
export function unknownResume(): string {
  const detail = describeErrors([
    {
      instancePath: '',
      schemaPath: '#/discriminator',
      keyword: 'discriminator',
      params: { error: 'mapping', tag: 'type', tagValue: 'resume' },
    },
  ]);
  return frames.appError('INVALID_MESSAGE', errorText('INVALID_MESSAGE', 'invalid', { type: 'resume', detail }));
}

function refused(error: string, eventId: string): ResumeVerdict {
  return { outcome: 'refused', frame: frames.appError('RESUME_REFUSED', error, { event_id: eventId }) };
}

function gap(error: string, eventId: string, agentId?: string): { outcome: 'gap'; frame: string } {
  return {
    outcome: 'gap',
    frame: frames.appError('RESUME_GAP', error, { event_id: eventId, ...(agentId ? { agent_id: agentId } : {}) }),
  };
}

/** The bound behind a gap, as the RESUME_GAP text names it. */
function whyDropped(reason: DropReason | undefined, bounds: ResumeBounds): string {
  switch (reason) {
    case 'app_limit':
      return `the app's kept streams were over ${bounds.appMaxBytes} bytes`;
    case 'node_limit':
      return `this node's kept streams were over ${bounds.nodeMaxBytes} bytes`;
    case 'event_limit':
    default:
      return `the event's fragments were over ${bounds.eventMaxBytes} bytes`;
  }
}
