// Resumes as one node handles them (R4-R8). A resume of an event kept here is judged here and answered at once; a
// resume of an event whose home is another node is handed to that node, whose answer and later frames come back
// to the resuming connection through this one (a home that does not answer within 1 s is a gap, `home_gone`).
// The home of such an event holds a stand-in for the remote connection, so the bridge sends to it as to any other.
// Resumes are an organization's fair share (F3: counted on the resuming connection's node, before anything is
// looked up) and so are the bytes they send again (R10: counted on the event's home, where the answer is built).
import type { ResumeMessage } from '../../generated/index.js';
import type { Clock, Timer } from '../shared/clock.js';
import { errorText } from '../shared/error-text.js';
import type { FairShares } from './fair-share.js';
import * as frames from './frames.js';
import type { Connection, ResumeRelay, ResumeRequest } from './engine.js';
import type { ResumeBounds, ResumeStore } from './resume-store.js';
import { judgeResume } from './resume.js';

/** R8: how long the resuming node waits for the event's home to answer. */
export const HOME_ANSWER_MS = 1000;

/** Where the frames of an event go once RESUME_GAP ended it for its app, or its resuming connection is gone. */
export const NOWHERE: Connection = { id: 0, send() {}, close() {} };

/** What the desk needs of the bridge: its events in flight. */
export interface ResumeHost {
  /** An event in flight here that is not kept for resumes (sent without ?resume=1): its app. */
  plainInFlight(eventId: string): { appId: string } | undefined;
  /**
   * Sends the event's frames to `conn` from now on, if it is in flight here (and, with `ifHeldBy`, only if that is
   * its connection now); returns the connection it had.
   */
  holdBy(eventId: string, conn: Connection, ifHeldBy?: Connection): Connection | undefined;
  /** The organization whose share an app's resumes take (undefined for an app no longer registered). */
  orgOf(appId: string): string | undefined;
}

export interface ResumeDeskOptions {
  store: ResumeStore;
  bounds: ResumeBounds;
  relay: ResumeRelay;
  clock: Clock;
  host: ResumeHost;
  shares: FairShares;
}

/** A resume handed to another node, waiting for its answer (`timer`) or, answered, for the event's later frames. */
interface Awaited {
  home: string;
  timer: Timer | undefined;
}

const isToken = (frame: string) => frame.startsWith(frames.TOKEN_FRAME_START);

/** Whether a last frame is the home's answer to a cancel (S5); any other (a reply that won, S8) leaves one to come. */
const answersCancel = (frame: string) => {
  const { code } = JSON.parse(frame) as { code?: string };
  return code === 'CANCELLED' || code === 'CANCEL_REFUSED';
};

export class ResumeDesk {
  /** Connections of this node that resumed events held elsewhere, by connection id. */
  private readonly awaiting = new Map<number, { conn: Connection; events: Map<string, Awaited> }>();
  /** Stand-ins for connections of other nodes that hold events of this one, by `node/connId/eventId`, and back. */
  private readonly remoteByKey = new Map<string, Connection>();
  private readonly remoteKeys = new Map<Connection, string>();
  /**
   * Cancels handed to an event's home by connections of this node (S5), by `connId/eventId`, until its answer
   * comes: it may come after the event's last frame (a reply that won the race, S8), when nothing else awaits it.
   */
  private readonly cancelling = new Map<string, { conn: Connection; eventId: string; home: string }>();

  constructor(private readonly o: ResumeDeskOptions) {}

  /** A `resume` from a resumable connection of `appId` on this node. */
  resume(conn: Connection, appId: string, message: ResumeMessage): void {
    const { store, host, relay, shares } = this.o;
    const { event_id, resume_token, after_seq } = message;
    const org = this.shareOf(appId);
    const wait = shares.resume(org);
    if (wait) {
      store.counted('limited');
      return conn.send(tooManyRequests('resume', org, event_id, wait));
    }
    if (!store.get(event_id) && !host.plainInFlight(event_id)) {
      const handed = relay.toResumeHome({ event_id, resume_token, after_seq, app_id: appId }, conn.id);
      if (handed) return this.awaitHome(conn, event_id, handed);
    }
    for (const frame of this.settle(appId, message, conn).frames) conn.send(frame);
  }

  /** Whether `conn` is the stand-in of another node's connection that holds an event of this node. */
  reaches(conn: Connection): boolean {
    return this.remoteKeys.has(conn);
  }

  /** The event held by `conn` ended (its final frame sent) or went to another connection: a stand-in is let go. */
  released(conn: Connection): void {
    const key = this.remoteKeys.get(conn);
    if (key === undefined) return;
    this.remoteKeys.delete(conn);
    this.remoteByKey.delete(key);
  }

  /** The node that holds the event `conn`, a connection of this node, resumed from it; undefined when none. */
  awaitedHome(conn: Connection, eventId: string): string | undefined {
    const waiting = this.awaiting.get(conn.id);
    return waiting?.conn === conn ? waiting.events.get(eventId)?.home : undefined;
  }

  /** `conn` handed the cancel of an event to its home (S5): the answer goes to it, whenever it comes. */
  cancelSent(conn: Connection, eventId: string, home: string): void {
    this.cancelling.set(`${conn.id}/${eventId}`, { conn, eventId, home });
  }

  /** The cancels handed to `node` (undefined: to any other node), which will never be answered now: forgotten. */
  cancelsLost(node: string | undefined): { conn: Connection; eventId: string }[] {
    const lost = [...this.cancelling].filter(([, sent]) => node === undefined || sent.home === node);
    for (const [key] of lost) this.cancelling.delete(key);
    return lost.map(([, sent]) => sent);
  }

  /**
   * `node` is gone (undefined: every other node is out of reach): the events this node's connections resumed from
   * it end for them with RESUME_GAP `home_gone`, as when a home does not answer the resume (R8).
   */
  homesGone(node: string | undefined): void {
    for (const [connId, waiting] of [...this.awaiting]) {
      for (const [eventId, awaited] of [...waiting.events]) {
        if (node !== undefined && awaited.home !== node) continue;
        awaited.timer?.cancel();
        this.forgetAwaited(connId, eventId);
        this.gapHomeGone(waiting.conn, eventId, awaited.home);
      }
    }
  }

  /** The stand-in of connection `connId` of node `from` that resumed the event, if it holds it from here. */
  standIn(from: string, connId: number, eventId: string): Connection | undefined {
    return this.remoteByKey.get(`${from}/${connId}/${eventId}`);
  }

  /** A connection of this node is gone: the homes of the events it resumed stop sending it their frames. */
  connectionGone(conn: Connection): void {
    for (const [key, sent] of this.cancelling) if (sent.conn === conn) this.cancelling.delete(key);
    const waiting = this.awaiting.get(conn.id);
    if (waiting?.conn !== conn) return;
    this.awaiting.delete(conn.id);
    for (const [eventId, awaited] of waiting.events) {
      awaited.timer?.cancel();
      this.o.relay.resumerGone(awaited.home, conn.id, eventId);
    }
  }

  /** The home side of R8: a connection of node `from` resumes an event of this node. */
  resumeRequest(from: string, request: ResumeRequest, connId: number): void {
    const { event_id, resume_token, after_seq, app_id } = request;
    const key = `${from}/${connId}/${event_id}`;
    let standIn = this.remoteByKey.get(key);
    if (!standIn) {
      standIn = this.o.relay.remoteApp(from, connId, event_id);
      this.remoteByKey.set(key, standIn);
      this.remoteKeys.set(standIn, key);
    }
    const { frames: answer, holds } = this.settle(
      app_id,
      { type: 'resume', event_id, resume_token, after_seq },
      standIn,
    );
    if (!holds) this.released(standIn);
    // Before any live frame of the event: it is now the stand-in's, and the bus keeps the order.
    this.o.relay.answerResume(from, connId, event_id, answer);
  }

  /** The resuming side of R8: frames from the event's home for a connection of this node, the answer first. */
  framesForApp(from: string, connId: number, eventId: string, sent: string[]): void {
    const waiting = this.awaiting.get(connId);
    const awaited = waiting?.events.get(eventId);
    const cancelKey = `${connId}/${eventId}`;
    const cancelled = this.cancelling.get(cancelKey);
    if (!waiting || !awaited) {
      // The answer to a cancel that came after the event's last frame (S8): for the connection that sent it.
      if (cancelled) {
        this.cancelling.delete(cancelKey);
        for (const frame of sent) cancelled.conn.send(frame);
        return;
      }
      return this.o.relay.resumerGone(from, connId, eventId); // gone, or given up on (home_gone)
    }
    awaited.timer?.cancel();
    awaited.timer = undefined;
    for (const frame of sent) {
      waiting.conn.send(frame);
      if (!isToken(frame)) {
        this.forgetAwaited(connId, eventId); // a reply, or an error: nothing more will come
        if (answersCancel(frame)) this.cancelling.delete(cancelKey);
      }
    }
  }

  /** The home side: a connection of node `from` that held an event of this node no longer takes its frames. */
  resumerGone(from: string, connId: number, eventId: string): void {
    const standIn = this.remoteByKey.get(`${from}/${connId}/${eventId}`);
    if (!standIn) return;
    this.released(standIn);
    this.o.host.holdBy(eventId, NOWHERE, standIn);
  }

  stop(): void {
    for (const { events } of this.awaiting.values()) for (const awaited of events.values()) awaited.timer?.cancel();
    this.awaiting.clear();
    this.cancelling.clear();
  }

  /**
   * Judges a resume of an event kept here for `conn` (of this node or a stand-in): the frames to send it, and
   * whether it now holds the event (in flight).
   */
  private settle(appId: string, message: ResumeMessage, conn: Connection): { frames: string[]; holds: boolean } {
    const { store, bounds, host, shares } = this.o;
    const verdict = judgeResume(store, bounds, appId, message, (eventId) => host.plainInFlight(eventId));
    const { event_id } = message;
    if (verdict.outcome === 'resumed') {
      const org = this.shareOf(appId);
      const wait = shares.replay(
        org,
        verdict.frames.reduce((n, frame) => n + Buffer.byteLength(frame, 'utf8'), 0),
      );
      if (wait) {
        store.counted('limited');
        return {
          frames: [tooManyRequests('replay', org, event_id, wait, shares.limits.replayBytesPerSecond)],
          holds: false,
        };
      }
    }
    store.counted(verdict.outcome);
    switch (verdict.outcome) {
      case 'refused':
        return { frames: [verdict.frame], holds: false };
      case 'gap':
        if (verdict.stream) {
          store.gap(verdict.stream);
          this.releaseHolder(host.holdBy(event_id, NOWHERE));
        }
        return { frames: [verdict.frame], holds: false };
      case 'resumed': {
        // All in one turn: no live fragment can fall between the ones sent again and the hand-over.
        const holds = !verdict.stream.ended;
        if (holds) this.releaseHolder(host.holdBy(event_id, conn));
        return { frames: verdict.frames, holds };
      }
    }
  }

  /** The key of an app's fair share: its organization's (its own id once it is no longer registered). */
  private shareOf(appId: string): string {
    return this.o.host.orgOf(appId) ?? appId;
  }

  private releaseHolder(previous: Connection | undefined): void {
    if (previous) this.released(previous);
  }

  /** Waits for the answer of the event's home node to a resume handed to it (R8). */
  private awaitHome(conn: Connection, eventId: string, handed: { home: string; up: boolean }): void {
    const { home, up } = handed;
    const homeGone = () => this.gapHomeGone(conn, eventId, home);
    if (!up) return homeGone();
    let waiting = this.awaiting.get(conn.id);
    if (!waiting) this.awaiting.set(conn.id, (waiting = { conn, events: new Map() }));
    waiting.events.get(eventId)?.timer?.cancel();
    const awaited: Awaited = { home, timer: undefined };
    awaited.timer = this.o.clock.setTimer(HOME_ANSWER_MS, () => {
      this.forgetAwaited(conn.id, eventId);
      this.o.relay.resumerGone(home, conn.id, eventId); // should its answer come late, the event is not sent here
      homeGone();
    });
    waiting.events.set(eventId, awaited);
  }

  /** The end of an event whose home cannot send the rest of it (R8). */
  private gapHomeGone(conn: Connection, eventId: string, home: string): void {
    this.o.store.counted('gap');
    const text = errorText('RESUME_GAP', 'home_gone', { event_id: eventId, node: home });
    conn.send(frames.appError('RESUME_GAP', text, { event_id: eventId }));
  }

  private forgetAwaited(connId: number, eventId: string): void {
    const waiting = this.awaiting.get(connId);
    if (!waiting) return;
    waiting.events.delete(eventId);
    if (!waiting.events.size) this.awaiting.delete(connId);
  }
}

/** TOO_MANY_REQUESTS for a resume (F3) or its answer's bytes (R10): the frame is refused, the event goes on. */
function tooManyRequests(
  situation: 'resume' | 'replay',
  orgId: string,
  eventId: string,
  seconds: number,
  rate = 0,
): string {
  const text = errorText('TOO_MANY_REQUESTS', situation, { org_id: orgId, event_id: eventId, seconds, rate });
  return frames.appError('TOO_MANY_REQUESTS', text, { event_id: eventId, metadata: { retry_after_seconds: seconds } });
}
