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
