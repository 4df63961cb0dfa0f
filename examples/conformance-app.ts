// The app client command for `bridge-conformance client --role app --command "npx tsx examples/conformance-app.ts"`:
// connects with BRIDGE_URL and BRIDGE_TOKEN (connectApp: token in the header, heartbeat and backoff built in),
// sends the contract's event, prints the reply's text and exits 0. In the slow app-heartbeat scenario it then
// stays connected until it is stopped, so the suite can watch its pings.
import { connectApp } from '../src/sdk/app-client.js';

const url = process.env.BRIDGE_URL;
const token = process.env.BRIDGE_TOKEN;
if (!url || !token) {
  console.error('BRIDGE_URL and BRIDGE_TOKEN must be set');
  process.exit(2);
}

// The SDK's reconnect timer does not hold the process open (it is unref'd), so while connectApp is still retrying
// nothing else would: keep the event loop alive until we are done.
const keepAlive = setInterval(() => {}, 60_000);

try {
  const app = await connectApp({ url, token });
  const text = await app.send({ agentId: 'echo-agent', threadId: 'conformance', payload: { text: 'hello' } }).text();
  console.log(text);
  if (process.env.BRIDGE_SCENARIO === 'app-heartbeat') {
    process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
  } else {
    await app.close();
    clearInterval(keepAlive);
    process.exit(0);
  }
} catch (err) {
  console.error(`conformance-app: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
