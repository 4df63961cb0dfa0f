// The fragile variants: each leaves open one resource a client can make a bridge hold, the way a bridge written
// without a hostile client in mind does, so that robustness mode can be shown to find it (and nothing else). None
// breaks a rule of the protocol: the protocol states no bound for any of them.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

export const FRAGILITIES = {
  'upgrade-slots':
    'at most 64 sockets may be in their upgrade at once, and an upgrade request that never ends keeps its slot',
  'keeps-unread-frames':
    'keeps every frame for an app that stopped reading (as ws does unless bounded), in a process with room for 4 MiB of them: past that it ends, out of memory',
  'one-queue':
    'every app frame waits its turn in one queue for the whole bridge, 5 ms each (as a bridge writing each to a slow store in order would)',
} as const;

export type FragilityName = keyof typeof FRAGILITIES;

const SLOTS = 64;
const ROOM_BYTES = 4 * 1024 * 1024;
const FRAME_COST_MS = 5;

/** One queue for the whole bridge: each job runs FRAME_COST_MS after the one before it. */
function oneQueue() {
  const jobs: (() => void)[] = [];
  let running = false;
  const next = () => {
    const job = jobs.shift();
    if (!job) return void (running = false);
    setTimeout(() => {
      job();
      next();
    }, FRAME_COST_MS);
  };
  return (job: () => void) => {
    jobs.push(job);
    if (!running) {
      running = true;
      next();
    }
  };
}

/** Applies the variant's fragilities to its server; `die` ends the bridge as a crashed process would. */
export function makeFragile(server: Server, fragile: ReadonlySet<FragilityName>, die: () => void) {
  if (fragile.has('upgrade-slots')) {
    const inUpgrade = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      if (inUpgrade.size >= SLOTS) return void socket.destroy();
      inUpgrade.add(socket);
      socket.once('close', () => inUpgrade.delete(socket));
    });
    server.on('upgrade', (_req, socket: Socket) => inUpgrade.delete(socket));
    server.on('request', (req) => req.once('end', () => inUpgrade.delete(req.socket)));
  }
  const enqueue = oneQueue();
  return {
    /** Called for each app connection the bridge takes, before its own handlers. */
    app(ws: WebSocket): void {
      if (fragile.has('one-queue')) {
        // The hub's handlers hear each message only when its turn in the queue comes.
        const emit = ws.emit.bind(ws);
        ws.emit = (event: string | symbol, ...args: unknown[]) => {
          if (event !== 'message') return emit(event, ...args);
          enqueue(() => emit(event, ...args));
          return true;
        };
      }
      if (fragile.has('keeps-unread-frames')) {
        const watch = setInterval(() => ws.bufferedAmount > ROOM_BYTES && die(), 20);
        ws.once('close', () => clearInterval(watch));
      }
    },
  };
}
