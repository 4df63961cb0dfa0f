// The resume extension's rules of every frame an app connection receives (spec/protocol.md R1-R3), judged in the
// extension's scenarios the way the schemas are judged in every scenario: a connection opened without `?resume=1`
// sees none of the extension's fields; one opened with it gets a resume token on each `accepted`, never the same
// twice, and positions 1, 2, 3… on the tokens of the events it sent, none on their reply or error. What comes on a
// connection that took an event back is judged by the scenario's steps instead (R4: from after_seq on).
import { validateResumeToken, validateStreamSeq } from '../generated/index.js';
import { EXTENSION_FRAME_REQUIREMENTS as RES } from './scenario.js';

export interface FrameProblem {
  requirement: string;
  problem: string;
}

/**
 * Judges one received frame (parsed, and its text for the report); keeps what it must remember of the connection's
 * earlier frames. `problem` completes "app1 received …".
 */
export type FrameRule = (frame: Record<string, unknown>, text: string) => FrameProblem | undefined;

const quote = (text: string) => text.slice(0, 300);

/** The fields only a resumable connection may receive (R1). */
const EXTENSION_FIELDS = ['resume_token', 'seq'] as const;

/**
 * The rule for one app connection. `seenTokens` is shared by the scenario's connections: a resume token given for
 * a second event, on whatever connection, breaks R2.
 */
export function resumeFrameRule(resumable: boolean, seenTokens: Set<string>): FrameRule {
  if (!resumable) {
    return (frame, text) => {
      const field = EXTENSION_FIELDS.find((k) => Object.hasOwn(frame, k));
      return field
        ? { requirement: RES.notOptedIn, problem: `${quote(text)}: ${field} on a connection opened without ?resume=1` }
        : undefined;
    };
  }
  // The last position received of each event accepted on this connection (0 before its first token).
  const positions = new Map<string, number>();
  return (frame, text) => {
    const event = String(frame.event_id);
    const problem = (requirement: string, why: string): FrameProblem => ({
      requirement,
      problem: `${quote(text)}: ${why}`,
    });
    if (frame.type === 'accepted') {
      const token = frame.resume_token;
      if (!validateResumeToken(token))
        return problem(
          RES.resumeToken,
          `an accepted on a resumable connection needs a resume_token of 43 base64url characters`,
        );
      if (seenTokens.has(token)) return problem(RES.resumeToken, `the resume_token of an earlier event again`);
      seenTokens.add(token);
      positions.set(event, 0);
      return undefined;
    }
    if (frame.type === 'token') {
      if (!validateStreamSeq(frame.seq))
        return problem(RES.positions, `a token on a resumable connection needs a seq from 1`);
      const last = positions.get(event);
      if (last === undefined) return undefined;
      if (frame.seq !== last + 1) return problem(RES.positions, `seq ${frame.seq} after ${last}; expected ${last + 1}`);
      positions.set(event, frame.seq);
      return undefined;
    }
    if ((frame.type === 'reply' || frame.type === 'error') && Object.hasOwn(frame, 'seq')) {
      return problem(RES.positions, `a ${frame.type} carries no seq; only tokens do`);
    }
    return undefined;
  };
}
