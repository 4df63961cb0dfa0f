// A large directory: one organization with many agents, and its app asking `discover`. The protocol sets no size for
// the answer; a bridge that answers in one frame may outgrow its own frame limit. What it answers is observed.
import type { FixtureSet } from '../../../generated/index.js';
import { sendJson } from './agent.js';
import { connectApp } from './app.js';
import type { ResourceCase } from './types.js';

export const largeDirectory: ResourceCase = {
  id: 'resource.directory',
  title: 'a large directory asked for by discover',
  async run(ctx) {
    const n = ctx.amounts.directoryAgents;
    const agents: FixtureSet['agents'] = {};
    for (let i = 1; i <= n; i++)
      agents[`dir-agent-${i}`] = { org: 'dir', name: `Directory agent ${i}`, description: `${'d'.repeat(180)} ${i}` };
    const started = performance.now();
    const created = await ctx.provision({ orgs: ['dir'], apps: { 'dir-app': 'dir' }, agents });
    ctx.observe('agents registered', Object.keys(created.agents).length);
    ctx.observe('registered in (ms)', Math.round(performance.now() - started));
    const app = await connectApp({ ...ctx, target: { ...ctx.target, appToken: created.apps['dir-app']!.token } });
    const asked = performance.now();
    sendJson(ctx, app.ws, { type: 'discover' });
    const answer = await app.next((f) => f.type === 'agents' || f.type === 'error', 4 * ctx.timeoutMs);
    ctx.observe('answer', answer ? String(answer.type) + (answer.code ? ` ${String(answer.code)}` : '') : 'none');
    if (answer?.type === 'agents' && Array.isArray(answer.agents)) ctx.observe('agents listed', answer.agents.length);
    ctx.observe('answer bytes', app.bytes);
    ctx.observe('answered in (ms)', Math.round(performance.now() - asked));
    await ctx.probe();
  },
};
