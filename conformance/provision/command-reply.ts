// What a provisioning command said to one request, whichever way it was run: an answer, "not supported", or a
// failure. The command's own mode (one process per request, or lines) only changes how it is read.
import {
  validateProvisionLineAnswer,
  validateProvisionLineError,
  validateProvisionLineUnsupported,
} from '../../generated/index.js';
import { ProvisionError } from './provisioner.js';

/** `exit`: the exit code of a command run once per request, when it failed; lines mode has none. */
export type Reply = { answer: unknown } | { unsupported: string } | { error: string; exit?: number | null };

/** How long one request may take by default, in either mode: a command that hangs must not hang the run. */
export const REQUEST_TIMEOUT_MS = 60_000;

export const seconds = (ms: number): string => `${ms / 1000} s`;

export const lastLine = (text: string): string => text.trim().split('\n').pop()?.slice(0, 300) ?? '';

/**
 * One answer line of lines mode: `{"answer": …}`, or `{"unsupported": …}` and `{"error": …}` for exit 3 and other
 * exits, each with the `seq` of the request it answers (spec/conformance.yaml ProvisionLineAnswer).
 */
export function replyOfLine(line: string, action: string): { reply: Reply; seq: number | undefined } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new ProvisionError(
      `the provisioning command's answer line to ${action} is not one JSON value: ${line.slice(0, 200)}`,
    );
  }
  if (validateProvisionLineAnswer(value)) return { reply: { answer: value.answer }, seq: value.seq };
  if (validateProvisionLineUnsupported(value)) return { reply: { unsupported: value.unsupported }, seq: value.seq };
  if (validateProvisionLineError(value)) return { reply: { error: value.error }, seq: value.seq };
  throw new ProvisionError(
    `the provisioning command's answer line to ${action} is none of {"answer": {…}}, {"unsupported": "why"}, {"error": "why"} (each with the request's "seq"): ${line.slice(0, 200)}`,
  );
}
