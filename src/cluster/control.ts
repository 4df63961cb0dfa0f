// What every node must do, not just the one whose admin API was called: apply a change (registrations reloaded
// from the shared database, a revocation closing live connections wherever they are, sessions dropped with an
// organization, the test clock) or answer a question (its sessions, its overview, an organization's connections on
// it; commit its event log before a listing). The
// asking node waits until every live node has answered (at most `waitMs`), so that once the admin API answers,
// the change holds on every node and a listing is every node's. A node that does not know an op (a newer node
// asked, O16) says so at once rather than leave the asker waiting: the asker logs it and names that node missing.
import {
  BUS_VERSION as v,
  CONTROL_OPS,
  type BusMessage,
  type ControlOp,
  type OverviewNode,
} from '../../generated/index.js';
import type { ClosedOnNode, NodeConnections } from '../core/live-picture.js';
import type { SessionRecord } from '../core/sessions.js';
import type { Logger } from '../shared/logger.js';
import type { Bus } from './bus.js';

export type { ControlOp };

const KNOWN_OPS: ReadonlySet<unknown> = new Set(CONTROL_OPS);

/** What a node answers to each op (undefined: done). */
export type ControlAnswer<O extends ControlOp> = O extends { op: 'sessions' }
  ? SessionRecord[]
  : O extends { op: 'overview' }
    ? OverviewNode
    : O extends { op: 'org-live' }
      ? NodeConnections
      : O extends { op: 'disconnect' }
        ? ClosedOnNode | undefined
        : undefined;

/** Every answer to a question, and the nodes that were asked and did not answer in time (or went down). */
export interface Gathered<A> {
  answers: A[];
  missing: string[];
}

interface Waiting {
  op: ControlOp['op'];
  asked: string[];
  from: Set<string>;
  answered: Set<string>;
  answers: unknown[];
  done: () => void;
}

export class ClusterControl {
  private next = 0;
  private readonly waiting = new Map<number, Waiting>();

  constructor(
    private readonly bus: Bus,
    private readonly apply: (change: ControlOp) => Promise<unknown> | unknown,
    private readonly log: Logger,
    private readonly waitMs = 1000,
  ) {
    bus.subscribe((from, message) => this.receive(from, message));
    bus.onNodeDown((node) => {
      for (const [id, wait] of this.waiting) if (wait.from.delete(node) && !wait.from.size) this.finish(id);
    });
  }

  /** Tells every other node; resolves with their answers once they all have, or after `waitMs` (logged). */
  async ask<O extends ControlOp>(change: O): Promise<ControlAnswer<O>[]> {
    return (await this.gather(change)).answers;
  }

  /** As `ask`, also naming the nodes that did not answer (the overview lists them, D8). */
  gather<O extends ControlOp>(change: O): Promise<Gathered<ControlAnswer<O>>> {
    const peers = this.bus.peers();
    const id = ++this.next;
    const message: BusMessage = { k: 'ctl', v, id, change };
    // Sent to every node subscribed, also one this node has not seen beat yet; waited for from those it has.
    if (!peers.length) {
      this.bus.broadcast(message);
      return Promise.resolve({ answers: [], missing: [] });
    }
    return new Promise((resolve) => {
      const wait: Waiting = {
        op: change.op,
        asked: peers,
        from: new Set(peers),
        answered: new Set(),
        answers: [],
        done: () => {
          clearTimeout(timer);
          resolve({
            answers: wait.answers as ControlAnswer<O>[],
            missing: wait.asked.filter((node) => !wait.answered.has(node)),
          });
        },
      };
      const timer = setTimeout(() => {
        this.log.warn(
          { op: change.op, nodes: [...wait.from] },
          'nodes did not answer within 1 s; they apply a change when it reaches them',
        );
        this.finish(id);
      }, this.waitMs);
      timer.unref();
      this.waiting.set(id, wait);
      this.bus.broadcast(message);
    });
  }

  private finish(id: number): void {
    const wait = this.waiting.get(id);
    this.waiting.delete(id);
    wait?.done();
  }

  private receive(from: string, message: BusMessage): void {
    if (message.k === 'ctl-ack') return this.answered(from, message.id, message.answer, message.unknown);
    if (message.k !== 'ctl') return;
    const { id, change } = message;
    if (!KNOWN_OPS.has(change.op)) {
      this.bus.unknownMessages.record('op', from, change.op);
      return this.bus.send(from, { k: 'ctl-ack', v, id, unknown: true });
    }
    Promise.resolve()
      .then(() => this.apply(change))
      .then(
        (answer) => this.bus.send(from, { k: 'ctl-ack', v, id, ...(answer === undefined ? {} : { answer }) }),
        (err) => {
          this.log.error({ err, op: change.op }, 'applying a change from another node failed');
          this.bus.send(from, { k: 'ctl-ack', v, id });
        },
      );
  }

  /** Node `from` answered question `id`; `unknown`: it does not know the op, so it counts as not answering. */
  private answered(from: string, id: number, answer: unknown, unknown: true | undefined): void {
    const wait = this.waiting.get(id);
    if (!wait?.from.delete(from)) return;
    if (unknown) {
      this.log.warn({ node: from, op: wait.op }, 'a node does not know this control op (another release? O16)');
    } else {
      wait.answered.add(from);
      if (answer !== undefined) wait.answers.push(answer);
    }
    if (!wait.from.size) this.finish(id);
  }
}
