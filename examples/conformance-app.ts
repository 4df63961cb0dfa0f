// The app client command for `bridge-conformance client --role app --command "npx tsx examples/conformance-app.ts"`:
// connects with BRIDGE_URL and BRIDGE_TOKEN (connectApp: token in the header, heartbeat and backoff built in),
// sends the contract's event once, prints the reply's text (or the error's code), and stays connected until it is
// stopped, so the suite can watch its heartbeat and reconnects. It never sends the event again.
import { BridgeError, connectApp } from '../src/sdk/index.js';

const url = process.env.BRIDGE_URL;
const token = process.env.BRIDGE_TOKEN;
if (!url || !token) {
  console.error('BRIDGE_URL and BRIDGE_TOKEN must be set');
  process.exit(2);
}

// The SDK's reconnect timer does not hold the process open (it is unref'd): keep the event loop alive until stopped.
const keepAlive = setInterval(() => {}, 60_000);

try {
  const app = await connectApp({ url, token });
  const stop = () =>
    void app.close().then(() => {
      clearInterval(keepAlive);
      process.exit(0);
    });
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  try {
    console.log(await app.send({ agentId: 'echo-agent', threadId: 'conformance', payload: { text: 'hello' } }).text());
  } catch (err) {
    // An error about the event ends only the event: say so and stay.
    console.log(`error ${err instanceof BridgeError ? err.code : String(err)}`);
  }
} catch (err) {
  console.error(`conformance-app: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
