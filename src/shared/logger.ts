// The slice of a structured logger (pino's call shape) that the bridge and the connector use, so tests need no
// logger at all and neither side depends on the other for it.
export interface Logger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

const nothing = () => {};
export const silentLogger: Logger = { debug: nothing, info: nothing, warn: nothing, error: nothing };

/** `log` with `fields` on every line (a node's id on the core's lines); a line's own fields win. */
export function withFields(log: Logger, fields: object): Logger {
  return {
    debug: (more, message) => log.debug({ ...fields, ...more }, message),
    info: (more, message) => log.info({ ...fields, ...more }, message),
    warn: (more, message) => log.warn({ ...fields, ...more }, message),
    error: (more, message) => log.error({ ...fields, ...more }, message),
  };
}
