// A logger that keeps what the bridge's services say as they start and stop (src/server/services.ts, at debug).
import type { Logger } from '../../src/shared/logger.js';

export function serviceLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const nothing = () => {};
  const debug = (fields: object, message: string) => {
    const { service } = fields as { service?: string };
    if (service) lines.push(`${message} ${service}`);
  };
  return { debug, info: nothing, warn: nothing, error: nothing, lines };
}
