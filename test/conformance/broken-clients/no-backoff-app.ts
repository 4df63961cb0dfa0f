// A deliberately broken app: when a connection attempt fails it retries at once (10 ms), with no backoff.
// Otherwise it keeps the client contract: it sends the event and prints the reply.
import WebSocket from 'ws';

function attempt(): void {
  const ws = new WebSocket(`${process.env.BRIDGE_URL}/ws/app`, {
    headers: { authorization: `Bearer ${process.env.BRIDGE_TOKEN}` },
  });
  let opened = false;
  ws.on('open', () => {
    opened = true;
    ws.send(JSON.stringify({ type: 'ping' }));
    ws.send(
      JSON.stringify({ type: 'event', agent_id: 'echo-agent', thread_id: 'conformance', payload: { text: 'hello' } }),
    );
  });
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { type: string; reply?: string };
    if (frame.type === 'reply') {
      console.log(frame.reply);
      process.exit(0);
    }
  });
  ws.on('error', () => {});
  ws.on('close', () => {
    if (!opened) setTimeout(attempt, 10);
    else process.exit(1);
  });
}
attempt();
