// Connections that leave a message unfinished: each sends the header of a text frame and only part of what it
// announces. A bridge holds what came until the frame is whole; how much, and for how long, is observed.
import { clientFrame, closeAtEnd, endpointOf, openRaw, upgradeRaw } from './sockets.js';
import type { Socket } from 'node:net';
import { sleep, tally, type ResourceCase } from './types.js';

/** Announced: just under the protocol's frame limit (W2's 1 MiB), so that no bridge may refuse it for its size. */
const ANNOUNCED = 1024 * 1024 - 1024;

export const unfinishedFrames: ResourceCase = {
  id: 'resource.frames',
  title: 'messages left unfinished on many app connections, held',
  async run(ctx) {
    const e = endpointOf(ctx.url, 'app');
    const n = ctx.amounts.unfinishedFrames;
    const part = Math.min(ctx.amounts.unfinishedBytes, ANNOUNCED - 1);
    ctx.note(
      `opening ${n} app connections, each sending ${part} bytes of a ${ANNOUNCED}-byte text frame, holding them ${ctx.amounts.holdMs} ms`,
    );
    const upgraded: { socket: Socket; received: Buffer[] }[] = [];
    const refused: string[] = [];
    await Promise.all(
      Array.from({ length: n }, async () => {
        ctx.budget.connect();
        try {
          const socket = await openRaw(e, ctx.timeoutMs);
          ctx.hold(() => socket.destroy());
          socket.on('error', () => {});
          const status = await upgradeRaw(socket, e, ctx.target.appToken, ctx.timeoutMs);
          if (status !== 101) return void refused.push(`HTTP ${status}`);
          const held = { socket, received: [] as Buffer[] };
          socket.on('data', (d: Buffer) => held.received.push(d));
          socket.resume();
          upgraded.push(held);
        } catch (err) {
          refused.push((err as Error).message);
        }
      }),
    );
    const started = performance.now();
    const frame = clientFrame(0x1, Buffer.alloc(part, 0x61), ANNOUNCED);
    for (const { socket } of upgraded) {
      ctx.budget.send(frame.length);
      socket.write(frame);
    }
    ctx.observe('connections asked for', n);
    ctx.observe('upgraded', upgraded.length);
    if (refused.length) ctx.observe('refused', tally(refused));
    ctx.observe('bytes sent of unfinished messages', upgraded.length * part);
    await ctx.probe();
    await sleep(Math.max(0, ctx.amounts.holdMs - (performance.now() - started)));
    const closes = upgraded
      .filter((h) => h.socket.destroyed || h.socket.readableEnded)
      .map((h) => closeAtEnd(Buffer.concat(h.received)) ?? 'closed without a close frame');
    ctx.observe(`closed by the target within ${ctx.amounts.holdMs} ms`, closes.length ? tally(closes) : 0);
  },
};
