// The app client command for `bridge-conformance client --role app --command "npx tsx examples/conformance-app.ts"`:
// connects with BRIDGE_URL and BRIDGE_TOKEN (connectApp: token in the header, heartbeat and backoff built in),
// sends the contract's event once, prints the reply's text (or the error's code), and stays connected until it is
// stopped, so the suite can watch its heartbeat and reconnects. It never sends the event again. It honours
// BRIDGE_TIME_SCALE (the harness's scaled clock) through the SDK's injectable clock, and a token refused for good
// leaves it idle, not exited: the harness contract is to run until stopped (SIGTERM). In app-cancels it cancels the
// event after its first token (handle.cancel(), the cancel extension) and prints "error CANCELLED".
import { BridgeError, connectApp } from '../src/sdk/index.js';
import { scaledClock } from '../src/shared/clock.js';

const url = process.env.BRIDGE_URL;
const token = process.env.BRIDGE_TOKEN;
if (!url || !token) {
  console.error('BRIDGE_URL and BRIDGE_TOKEN must be set');
  process.exit(2);
}
const clock = scaledClock(Number(process.env.BRIDGE_TIME_SCALE ?? 1));

// The SDK's reconnect timer does not hold the process open (it is unref'd): keep the event loop alive until stopped.
const keepAlive = setInterval(() => {}, 60_000);
let close = async () => {};
const stop = () =>
  void close().then(() => {
    clearInterval(keepAlive);
    process.exit(0);
  });
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

try {
  const app = await connectApp({ url, token, clock });
  close = () => app.close();
  const handle = app.send({ agentId: 'echo-agent', threadId: 'conformance', payload: { text: 'hello' } });
  try {
    if (process.env.BRIDGE_SCENARIO === 'app-cancels')
      for await (const _ of handle.tokens) {
        handle.cancel(); // the user pressed Stop once the answer began
        break;
      }
    console.log(await handle.text());
  } catch (err) {
    // An error about the event ends only the event: say so and stay.
    console.log(`error ${err instanceof BridgeError ? err.code : String(err)}`);
  }
} catch (err) {
  // Refused for good (or out of retries): retrying cannot help, so stay idle until the harness stops us.
  console.error(`conformance-app: ${err instanceof Error ? err.message : String(err)}; idle until stopped`);
}
