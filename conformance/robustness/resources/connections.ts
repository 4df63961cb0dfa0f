// Many connections from one app token, opened at once: how many the bridge takes, how it refuses the rest.
import { endpointOf, openClient, type Outcome } from './sockets.js';
import { sleep, tally, type ResourceCase } from './types.js';

const BATCH = 50;

const refusal = (o: Outcome) =>
  o.kind === 'http'
    ? `HTTP ${o.status}`
    : o.kind === 'closed'
      ? `close ${o.code}${o.reason ? ` ${o.reason}` : ''}${o.error ? ` after ${o.error}` : ''}`
      : o.kind === 'failed'
        ? `failed: ${o.message}`
        : 'open';

export const manyConnections: ResourceCase = {
  id: 'resource.connections',
  title: 'many connections from one app token, opened at once and held',
  async run(ctx) {
    const e = endpointOf(ctx.url, 'app');
    const n = ctx.amounts.connections;
    ctx.note(`opening ${n} app connections with one token, ${BATCH} at a time, holding them ${ctx.amounts.holdMs} ms`);
    const outcomes: Outcome[] = [];
    for (let i = 0; i < n; i += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, n - i) }, () => {
        ctx.budget.connect();
        return openClient(e, ctx.target.appToken, { timeoutMs: ctx.timeoutMs, settleMs: 100 });
      });
      for (const o of await Promise.all(batch)) {
        outcomes.push(o);
        if (o.kind === 'open') ctx.hold(() => o.ws.terminate());
      }
    }
    const open = outcomes.filter((o) => o.kind === 'open');
    const refused = outcomes.filter((o) => o.kind !== 'open').map(refusal);
    ctx.observe('connections asked for', n);
    ctx.observe('connections open', open.length);
    ctx.observe('refused', tally(refused));
    await ctx.probe();
    await sleep(ctx.amounts.holdMs);
    const stillOpen = open.filter((o) => o.kind === 'open' && o.ws.readyState === o.ws.OPEN).length;
    ctx.observe(`still open after ${ctx.amounts.holdMs} ms`, stillOpen);
  },
};
