// A one-shot app: it connects, sends the contract's event, prints the reply and exits 0, as a script that asks one
// question would. Nothing it sends is wrong; it breaks only the harness contract (run until stopped), which the
// suite must report as such, not as failures of the heartbeat or reconnect rules it could not watch.
import WebSocket from 'ws';

const ws = new WebSocket(`${process.env.BRIDGE_URL}/ws/app`, {
  headers: { authorization: `Bearer ${process.env.BRIDGE_TOKEN}` },
});
ws.on('open', () =>
  ws.send(
    JSON.stringify({ type: 'event', agent_id: 'echo-agent', thread_id: 'conformance', payload: { text: 'hello' } }),
  ),
);
ws.on('message', (data) => {
  const frame = JSON.parse(data.toString()) as { type: string; reply?: string; code?: string };
  if (frame.type !== 'reply' && frame.type !== 'error') return;
  console.log(frame.reply ?? `error ${frame.code}`);
  ws.close(1000);
  process.exit(0);
});
ws.on('error', (err) => {
  console.error(`one-shot-app: ${err.message}`);
  process.exit(1);
});
