// Cancels (S1-S8): an app's `cancel` judged where its event lives. On the event's home, an event in flight of the
// cancelling connection ends with CANCELLED, its agent's node is told (the agent hears only if it opted in) and the
// agent's later frames about it are dropped (S4); anything else is CANCEL_REFUSED, the same frame for every case
// (S3). A connection that resumed, on this node, an event held on another hands its cancel to that home (S5).
import { errorText } from '../shared/error-text.js';
import type { CancelledEvents } from './cancelled-events.js';
import type { Connection, Delivery, ResumeRelay } from './engine.js';
import type { Endings } from './endings.js';
import type { EventInFlight } from './event-in-flight.js';
import type { EventTable } from './event-table.js';
import * as frames from './frames.js';
import type { ResumeDesk } from './resume-desk.js';

/** The label of bridge_cancels_total. */
export type CancelOutcome = 'cancelled' | 'refused';

export interface CancelsDeps {
  table: EventTable;
  endings: Endings;
  desk: ResumeDesk;
  delivery: Delivery;
  relay: ResumeRelay;
  remembered: CancelledEvents;
}

/** CANCEL_REFUSED about the frame: the same for an unknown, an ended and another app's event (S3). */
export function cancelRefused(eventId: string): string {
  const error = errorText('CANCEL_REFUSED', 'not_in_flight', { event_id: eventId });
  return frames.appError('CANCEL_REFUSED', error, { event_id: eventId });
}

export class Cancels {
  readonly counts: Record<CancelOutcome, number> = { cancelled: 0, refused: 0 };

  constructor(private readonly d: CancelsDeps) {}

  /** A `cancel` from `conn`, a connection of `appId` on this node. */
  cancel(conn: Connection, appId: string, eventId: string): void {
    const ev = this.d.table.get(eventId);
    if (ev) return this.judge(ev, appId, conn, () => conn.send(cancelRefused(eventId)));
    const home = this.d.desk.awaitedHome(conn, eventId);
    if (home !== undefined && this.d.relay.cancelAtHome(home, conn.id, eventId, appId))
      return this.d.desk.cancelSent(conn, eventId, home);
    this.counts.refused++;
    conn.send(cancelRefused(eventId));
  }

  /** The home side of S5: connection `connId` of node `from`, which resumed the event, cancels it. */
  cancelRequest(from: string, connId: number, eventId: string, appId: string): void {
    const standIn = this.d.desk.standIn(from, connId, eventId);
    const ev = this.d.table.get(eventId);
    const refuse = () => this.d.relay.answerResume(from, connId, eventId, [cancelRefused(eventId)]);
    if (!ev || !standIn) {
      this.counts.refused++;
      return refuse();
    }
    this.judge(ev, appId, standIn, refuse);
  }

  /** The homes gone (R8): the cancels handed to them get no answer, so they are refused here (S5). */
  homesGone(node: string | undefined): void {
    for (const { conn, eventId } of this.d.desk.cancelsLost(node)) {
      this.counts.refused++;
      conn.send(cancelRefused(eventId));
    }
  }

  /** The event is cancelled if `conn`, a connection of `appId`, is the one its frames go to (S2); else `refuse`. */
  private judge(ev: EventInFlight, appId: string, conn: Connection, refuse: () => void): void {
    if (ev.app.app_id !== appId || ev.appConn !== conn) {
      this.counts.refused++;
      return refuse();
    }
    this.counts.cancelled++;
    this.d.remembered.remember(ev.agentId, ev.eventId);
    this.d.endings.cancel(ev);
    this.d.delivery.cancelToAgent(ev.agentId, ev.eventId);
  }
}
