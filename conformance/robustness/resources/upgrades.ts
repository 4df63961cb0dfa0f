// Sockets that never finish their upgrade: the request's last line never comes. A bridge that gives each one a slot
// until it ends runs out of slots for everyone; how long it lets them hang is observed.
import type { Socket } from 'node:net';
import { endpointOf, openRaw, upgradeRequest } from './sockets.js';
import { sleep, tally, type ResourceCase } from './types.js';

export const unfinishedUpgrades: ResourceCase = {
  id: 'resource.upgrades',
  title: 'sockets that never finish their upgrade request, held',
  async run(ctx) {
    const e = endpointOf(ctx.url, 'app');
    const n = ctx.amounts.upgrades;
    ctx.note(`opening ${n} sockets whose upgrade request never ends, holding them ${ctx.amounts.holdMs} ms`);
    const started = performance.now();
    const closedAfter: number[] = [];
    const failed: string[] = [];
    const sockets: Socket[] = [];
    await Promise.all(
      Array.from({ length: n }, async () => {
        ctx.budget.connect();
        const request = upgradeRequest(e, undefined, false);
        ctx.budget.send(request.length);
        try {
          const s = await openRaw(e, ctx.timeoutMs);
          ctx.hold(() => s.destroy());
          s.on('data', () => {}); // an answer (408, 400) is read so that the close is seen
          s.on('error', () => {});
          s.once('close', () => closedAfter.push(Math.round(performance.now() - started)));
          s.write(request);
          sockets.push(s);
        } catch (err) {
          failed.push((err as Error).message.replace(/ \d+\.\d+\.\d+\.\d+:\d+/, ''));
        }
      }),
    );
    ctx.observe('sockets asked for', n);
    ctx.observe('sockets the target took', sockets.length);
    if (failed.length) ctx.observe('not taken', tally(failed));
    await ctx.probe();
    await sleep(Math.max(0, ctx.amounts.holdMs - (performance.now() - started)));
    ctx.observe(`closed by the target within ${ctx.amounts.holdMs} ms`, closedAfter.length);
    if (closedAfter.length) ctx.observe('first closed after (ms)', Math.min(...closedAfter));
  },
};
