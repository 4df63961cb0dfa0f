// An HTTP error with a catalogue code; its status comes from the catalogue, never from the throw site.
import { ERRORS, type ErrorCode } from '../../generated/index.js';

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
