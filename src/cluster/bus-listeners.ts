// Who listens to a bus: what both buses keep the same way, so each holds only how it carries messages.
import type { BusMessage } from './bus.js';

export abstract class BusListeners {
  protected readonly handlers: ((from: string, message: BusMessage) => void)[] = [];
  protected readonly downHandlers: ((node: string) => void)[] = [];
  protected readonly lostHandlers: (() => void)[] = [];
  protected readonly restoredHandlers: (() => void)[] = [];

  subscribe(handler: (from: string, message: BusMessage) => void): void {
    this.handlers.push(handler);
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
