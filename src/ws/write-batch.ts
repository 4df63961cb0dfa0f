// Frames sent to one socket during one turn of the event loop leave in one write. A loopback or LAN write costs
// a system call that does the whole TCP send; under load the profile was a third `writev`, one per frame. Corking
// until the turn's I/O callbacks are done (setImmediate) turns a burst of fragments into one call, and adds no
// waiting beyond the current turn.
import type { Duplex } from 'node:stream';

export function writeBatcher(): (socket: Duplex) => void {
  const corked = new Set<Duplex>();
  const flush = () => {
    for (const socket of corked) socket.uncork();
    corked.clear();
  };
  return function batch(socket: Duplex): void {
    if (corked.has(socket)) return;
    if (corked.size === 0) setImmediate(flush);
    corked.add(socket);
    socket.cork();
  };
}
