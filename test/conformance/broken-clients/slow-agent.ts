// A slow but correct agent: it answers every event with its text as one token and a reply, but only
// SLOW_AGENT_DELAY_MS (default 1500) after the event arrived, as an agent under load does. The suite must call
// that slow (a warning) when it is beyond the answer window, and fail only an agent silent past the hard limit.
import WebSocket from 'ws';

const delay = Number(process.env.SLOW_AGENT_DELAY_MS ?? 1500);
setInterval(() => {}, 1 << 30); // runs until stopped
const ws = new WebSocket(`${process.env.BRIDGE_URL}/ws/agent`, {
  headers: { authorization: `Bearer ${process.env.BRIDGE_TOKEN}` },
});
ws.on('message', (data) => {
  const frame = JSON.parse(data.toString()) as { type: string; event_id?: string; payload?: { text?: string } };
  if (frame.type !== 'event') return;
  setTimeout(() => {
    ws.send(JSON.stringify({ type: 'token', event_id: frame.event_id, token: `You said: ${frame.payload?.text}` }));
    ws.send(JSON.stringify({ type: 'reply', event_id: frame.event_id, content: '', done: true }));
  }, delay);
});
ws.on('error', () => {});
