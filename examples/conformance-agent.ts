// The agent client command for `bridge-conformance client --role agent --command "npx tsx examples/conformance-agent.ts"`:
// a Connector configured in code from BRIDGE_URL (+ '/ws/agent') and BRIDGE_TOKEN, whose agent_id is read from the
// token (`rla_{agent_id}_{secret}`). It echoes each event's text as streamed tokens, then replies; it runs until
// it is stopped (SIGTERM or SIGINT), ending anything in flight with an error. It honours BRIDGE_TIME_SCALE (the
// harness's scaled clock) through the SDK's injectable clock, and a token refused for good leaves it idle, not
// exited: the harness contract is to run until stopped. The connector opts in to the cancel extension (?cancel=1):
// in agent-cancel it streams slowly, as the contract asks, and stops when the app cancels (ctx.signal).
import { Connector, resolveConnectorConfig } from '../src/sdk/index.js';
import { scaledClock } from '../src/shared/clock.js';

const url = process.env.BRIDGE_URL;
const token = process.env.BRIDGE_TOKEN;
if (!url || !token) {
  console.error('BRIDGE_URL and BRIDGE_TOKEN must be set');
  process.exit(2);
}
const agentId = token.split('_')[1] ?? '';
const clock = scaledClock(Number(process.env.BRIDGE_TIME_SCALE ?? 1));
// The connector's timers do not hold the process open: keep the event loop alive until stopped.
const keepAlive = setInterval(() => {}, 60_000);

// The connector gives up after 5 failed attempts by default (§2.6); the backoff-cap scenario needs 8 to see the cap.
const reconnect = process.env.BRIDGE_SCENARIO === 'agent-backoff-cap' ? { maxRetries: 10 } : {};
const config = resolveConnectorConfig(
  { connection: { url: `${url.replace(/\/+$/, '')}/ws/agent`, reconnect }, agents: [{ agent_id: agentId, token }] },
  { source: 'conformance-agent' },
);
/** agent-cancel's contract: stream each answer over at least 5 s (here 6 s: 60 tokens, 100 ms apart, real time). */
const slowly = process.env.BRIDGE_SCENARIO === 'agent-cancel';
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

const connector = new Connector(config, {
  clock,
  async handler(event, ctx) {
    const text = typeof event.payload.text === 'string' ? event.payload.text : JSON.stringify(event.payload);
    if (slowly) {
      // A cancel aborts the signal: the loop stops there, and the connector sends nothing more for the event.
      for (let i = 0; i < 60 && !ctx.signal.aborted; i++) {
        ctx.token('.');
        await pause(100, ctx.signal);
      }
      if (ctx.signal.aborted) return;
    }
    ctx.stream(`You said: ${text}`, 1);
    ctx.reply('', { model: 'echo', tokens_used: ctx.tokenCount });
  },
});
const stop = () =>
  void connector.close().then(() => {
    clearInterval(keepAlive);
    process.exit(0);
  });
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
try {
  await connector.start();
  console.log(`conformance-agent: ${agentId} connected`);
} catch (err) {
  // Refused for good (or out of retries): retrying cannot help, so stay idle until the harness stops us.
  console.error(`conformance-agent: ${err instanceof Error ? err.message : String(err)}; idle until stopped`);
}
