// ROB-001's probe: after each case another organization (the canary, app2 -> agent2) is still served; its latency.
import type { Connections, Fixture } from './connections.js';

/**
 * app2 -> agent2 -> reply at app2 within `canaryMs`; the latency, or why not. `fresh`: the app connects anew (during a
 * resource case's load, a new handshake is what a bridge out of slots would refuse).
 */
export async function canary(
  conns: Connections,
  c: Fixture,
  caseId: string,
  options: { canaryMs: number; timeoutMs: number; fresh?: boolean },
): Promise<number | string> {
  if (options.fresh) conns.release(['canary-app'], 'a new handshake for the canary during the load');
  const app = await conns.connect('canary-app', 'app', c.appToken).catch((err: Error) => err.message);
  if (typeof app === 'string') return `the canary app (another organization) could not connect: ${app}`;
  const agent = await conns.connect('canary-agent', 'agent', c.agentToken);
  await conns.drain(app);
  await conns.drain(agent);
  const thread = `canary-${caseId}`.slice(0, 60);
  const event = JSON.stringify({
    type: 'event',
    agent_id: c.agentId,
    thread_id: thread,
    payload: { canary: caseId },
  });
  const { answer, sentAt: started } = await conns.sendEvent(app, event, options.canaryMs);
  if (answer?.type !== 'accepted')
    return `the canary app (another organization) got ${answer ? JSON.stringify(answer).slice(0, 200) : `no answer to its event within ${options.timeoutMs} ms`}`;
  const delivered = await conns.waitFor(agent, (f) => f.type === 'event', options.canaryMs);
  if (!delivered)
    return `the canary's agent (another organization) did not get its event within ${options.canaryMs} ms`;
  conns.end(agent, delivered.event_id, 'canary');
  const leftMs = Math.max(1, options.canaryMs - (performance.now() - started));
  const answered = await conns.waitFor(app, (f) => f.type === 'reply' || f.type === 'error', leftMs);
  const ms = Math.round(performance.now() - started);
  if (!answered) return `the canary app (another organization) got no reply to its event within ${options.canaryMs} ms`;
  if (answered.type === 'error')
    return `the canary app (another organization) got ${JSON.stringify(answered).slice(0, 200)}`;
  return ms;
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
