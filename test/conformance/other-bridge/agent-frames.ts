// What the other bridge makes of an agent's frame, read from the protocol's agent tables alone. They mark no field
// required and let `content` be empty, so a `reply` without `content` or `done` is taken as a whole reply with
// empty content (this project refuses it: its decision W20); a field that is there must have the table's type.
type Frame = Record<string, unknown>;

const isObject = (v: unknown): v is Frame => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Shape of an agent message, apart from its event_id (judged separately, as INVALID_EVENT_ID). */
export function wellFormed(msg: Frame): boolean {
  switch (msg['type']) {
    case 'ping':
      return true;
    case 'token':
      return typeof msg['token'] === 'string';
    case 'reply':
      return (
        (msg['content'] === undefined || typeof msg['content'] === 'string') &&
        (msg['done'] === undefined || msg['done'] === true) &&
        (msg['metadata'] === undefined || isObject(msg['metadata']))
      );
    case 'error':
      return typeof msg['error'] === 'string' && typeof msg['code'] === 'string';
    default:
      return false;
  }
}

/**
 * The event_id an error to the agent carries: the refused frame's, when it is a non-empty string, else null (the
 * protocol does not show the shape of errors to agents; this project leaves the field out instead, W3).
 */
export function quotedEventId(msg: unknown): string | null {
  const id = isObject(msg) ? msg['event_id'] : undefined;
  return typeof id === 'string' && id !== '' ? id : null;
}
