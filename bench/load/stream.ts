// One stream of scenarios 1 and 2 (bench/load/streaming.ts), as each target's wiring gives it to the measurement,
// and what the wiring calls back. Its own file so that a target's wiring in a file of its own (./socketio.ts) and
// the measurement import it without importing each other.
import type { Socket } from 'node:net';
import type { Errors } from './common.js';

/** One agent -> app stream; its target's wiring says how its frames travel. */
export interface Stream {
  threadId: string;
  agentId: string;
  eventId?: string;
  inFlight: number;
  started: boolean;
  /** Fragments sent, and the number the app expects next (with `sequence`). */
  sent: number;
  next: number;
  /** The agent's TCP socket: the generator corks it while it sends one event-loop turn's fragments. */
  agentTcp: Socket;
  /** The app sends the stream's event (payload `{ text }`) to its agent. */
  sendEvent(text: string): void;
  /** The agent sends one fragment, its text made by the generator. */
  sendToken(text: string): void;
  /** The agent ends the event (the bridge and the Socket.IO relay; the bare relay has no events to end). */
  sendReply(): void;
  close(): void;
}

/** What a target's wiring calls back: the measurement, the same for every target. */
export interface Hooks {
  errors: Errors;
  stopping(): boolean;
  /** The agent has the stream's event (and its id): it starts streaming. */
  startStream(s: Stream): void;
  /** A fragment arrived at the app; `frameBytes`: what carried it (summed over the run for the mean). */
  onToken(s: Stream, token: string, frameBytes: number): void;
  onReply(): void;
  /** The app's event was refused because its agent is not known yet (several nodes): true if it is sent again. */
  retryStart(s: Stream): boolean;
}
