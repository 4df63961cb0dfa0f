// The contract between a transport adapter and the core. The adapter hands over a socket and the raw facts of the
// handshake; the core decides everything and gives back what to call as the socket reports frames and its end, so
// an adapter is I/O only and a second transport is small.

/** A transport's connection, as the core drives it. */
export interface Socket {
  readonly id: number;
  send(frame: string): void;
  close(code: number, reason: string): void;
  /** Bytes written and not yet taken by the network: the core closes a slow consumer on it (W17). */
  bufferedBytes(): number;
  /** Stop reading frames (while the core waits for an answer one of them needs), and read again. */
  pause?(): void;
  resume?(): void;
}

/** What the transport calls for one connection. */
export interface ConnectionHandlers {
  /** A frame arrived (binary frames as `isBinary` with empty text: the core refuses them). */
  message(data: string, isBinary: boolean): void;
  /** The socket is gone, whoever closed it. */
  closed(): void;
}
