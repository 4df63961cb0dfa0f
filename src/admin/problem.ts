// An HTTP error with a catalogue code; its status comes from the catalogue, never from the throw site.
import { ERRORS, type ErrorCode } from '../../generated/index.js';
import { errorText, type MessageCode, type Situation, type TextArgs } from '../shared/error-text.js';

export class Problem extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.status = ERRORS[code].httpStatus ?? 500;
  }
}

/** A Problem worded by the catalogue: its code, the situation, and exactly the values its text needs. */
export function problem<C extends MessageCode, S extends Situation<C>>(
  code: C,
  situation: S,
  ...params: TextArgs<C, S>
): Problem {
  return new Problem(code, errorText(code, situation, ...params));
}
