// Who listens to a bus: what both buses keep the same way, so each holds only how it carries messages.
import type { BusMessageHead } from '../../generated/index.js';
import type { Logger } from '../shared/logger.js';
import type { BusMessage } from './bus.js';
import { UnknownMessages } from './unknown-messages.js';

export abstract class BusListeners {
  readonly unknownMessages: UnknownMessages;
  protected readonly handlers: ((from: string, message: BusMessage) => void)[] = [];
  protected readonly downHandlers: ((node: string) => void)[] = [];
  protected readonly lostHandlers: (() => void)[] = [];
  protected readonly restoredHandlers: (() => void)[] = [];

  constructor(log: Logger) {
    this.unknownMessages = new UnknownMessages(log);
  }

  subscribe(handler: (from: string, message: BusMessage) => void): void {
    this.handlers.push(handler);
  }

  /** A message from node `from`, as it came off the wire: to every handler if this node can read it (O16). */
  protected hear(from: string, message: Partial<BusMessageHead>): void {
    if (!this.unknownMessages.readable(from, message)) return;
    for (const handler of this.handlers) handler(from, message);
  }

  onNodeDown(handler: (node: string) => void): void {
    this.downHandlers.push(handler);
  }

  onLinkLost(handler: () => void): void {
    this.lostHandlers.push(handler);
  }

  onLinkRestored(handler: () => void): void {
    this.restoredHandlers.push(handler);
  }
}
