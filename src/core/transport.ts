// The contract between a transport adapter and the core. The adapter hands over a socket and the raw facts of the
// handshake; the core decides everything and gives back what to call as the socket reports frames and its end, so
// an adapter is I/O only and a second transport is small.

/** A transport's connection, as the core drives it. */
export interface Socket {
  readonly id: number;
  send(frame: string): void;
  close(code: number, reason: string): void;
  /** Bytes written and not yet taken by the network: the core closes a slow consumer on it (W17, L19). */
  bufferedBytes(): number;
  /** Stop reading frames (while the core waits for an answer one of them needs), and read again. */
  pause?(): void;
  resume?(): void;
  /** Sends a WebSocket ping; `left` once it has been written to the network (L22). Without it, no pings. */
  ping?(left: () => void): void;
  /**
   * Calls `then` once the transport has read what had already arrived on the socket: a deadline about to end a
   * connection hears a pong or a frame in flight first. Without it, at once.
   */
  afterReads?(then: () => void): void;
  /** Destroys the socket at once, whatever it still had queued (a connection closed already that holds too much). */
  terminate?(): void;
  /** The core accepted the connection: its token is checked and every bound passed (it is no longer anonymous, L21). */
  accepted?(): void;
}

/** What the transport calls for one connection. */
export interface ConnectionHandlers {
  /**
   * The handshake's answer waits for this (with whatever the core sent meanwhile): an agent's connection on
   * several nodes is answered once every node can find it (O14). Never rejects. Absent: answered at once.
   */
  ready?: Promise<void>;
  /** A frame arrived (binary frames as `isBinary` with empty text: the core refuses them). */
  message(data: string, isBinary: boolean): void;
  /** The socket is gone, whoever closed it: the close code and reason, when the transport had them. */
  closed(code?: number, reason?: string): void;
  /**
   * After a read: the bytes received of a message not yet whole (0 between messages), and whether a message began
   * since the last report (L20). Called when either changed.
   */
  partial?(bytes: number, restarted: boolean): void;
  /** A pong arrived (L22). */
  pong?(): void;
}
