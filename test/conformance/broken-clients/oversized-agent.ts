// A deliberately broken agent: it answers every event, but with one 5000-byte token (over the 4096-byte fragment
// limit) before its reply. Everything else it does is right.
import WebSocket from 'ws';

const ws = new WebSocket(`${process.env.BRIDGE_URL}/ws/agent`, {
  headers: { authorization: `Bearer ${process.env.BRIDGE_TOKEN}` },
});
ws.on('open', () => ws.send(JSON.stringify({ type: 'ping' })));
ws.on('message', (data) => {
  const frame = JSON.parse(data.toString()) as { type: string; event_id?: string };
  if (frame.type !== 'event' || !frame.event_id) return;
  ws.send(JSON.stringify({ type: 'token', event_id: frame.event_id, token: 'x'.repeat(5000) }));
  ws.send(JSON.stringify({ type: 'reply', event_id: frame.event_id, content: '', done: true }));
});
ws.on('close', () => process.exit(1));
ws.on('error', () => {});
