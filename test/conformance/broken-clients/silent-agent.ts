// A deliberately broken agent: it connects and answers pings, but never answers an event (no token, reply or error).
import WebSocket from 'ws';

const ws = new WebSocket(`${process.env.BRIDGE_URL}/ws/agent`, {
  headers: { authorization: `Bearer ${process.env.BRIDGE_TOKEN}` },
});
ws.on('open', () => ws.send(JSON.stringify({ type: 'ping' })));
ws.on('close', () => process.exit(1));
ws.on('error', () => {});
