// Changes that every node must apply, not just the one whose admin API made them: registrations (reloaded from
// the shared database), revocations (live connections closed wherever they are), sessions dropped with an
// organization, and the test clock. The node that makes a change waits until every live node has applied it (at
// most `waitMs`), so that once the admin API answers, the change holds on every node.
import type { ClientKind } from '../../generated/index.js';
import type { RevokeCause } from '../core/bridge.js';
import type { Logger } from '../shared/logger.js';
import type { Bus, BusMessage } from './bus.js';

export type ControlOp =
  | { op: 'directory' }
  | { op: 'revoke'; kind: ClientKind; id: string; cause: RevokeCause }
  | { op: 'drop-sessions'; ids: string[] }
  | { op: 'clock'; to: number };

type Message = { k: 'ctl'; id: number; change: ControlOp } | { k: 'ctl-ack'; id: number };

export class ClusterControl {
  private next = 0;
  private readonly waiting = new Map<number, { from: Set<string>; done: () => void }>();

  constructor(
    private readonly bus: Bus,
    private readonly apply: (change: ControlOp) => Promise<void> | void,
    private readonly log: Logger,
    private readonly waitMs = 1000,
  ) {
    bus.subscribe((from, message) => this.receive(from, message as Message));
    bus.onNodeDown((node) => {
      for (const [id, wait] of this.waiting) if (wait.from.delete(node) && !wait.from.size) this.finish(id);
    });
  }

  /** Tells every other node; resolves once they have all applied it, or after `waitMs` (logged). */
  tell(change: ControlOp): Promise<void> {
    const peers = this.bus.peers();
    if (!peers.length) return Promise.resolve();
    const id = ++this.next;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        const late = [...(this.waiting.get(id)?.from ?? [])];
        this.log.warn({ op: change.op, nodes: late }, 'nodes did not confirm a change within 1 s; they apply it when it reaches them');
        this.finish(id);
      }, this.waitMs);
      timer.unref();
      this.waiting.set(id, { from: new Set(peers), done: () => (clearTimeout(timer), resolve()) });
      this.bus.broadcast({ k: 'ctl', id, change } satisfies Message as BusMessage);
    });
  }

  private finish(id: number): void {
    const wait = this.waiting.get(id);
    this.waiting.delete(id);
    wait?.done();
  }

  private receive(from: string, message: Message): void {
    if (message.k === 'ctl-ack') {
      const wait = this.waiting.get(message.id);
      if (wait?.from.delete(from) && !wait.from.size) this.finish(message.id);
      return;
    }
    if (message.k !== 'ctl') return;
    Promise.resolve()
      .then(() => this.apply(message.change))
      .catch((err) => this.log.error({ err, op: message.change.op }, 'applying a change from another node failed'))
      .finally(() => this.bus.send(from, { k: 'ctl-ack', id: message.id } satisfies Message as BusMessage));
  }
}
