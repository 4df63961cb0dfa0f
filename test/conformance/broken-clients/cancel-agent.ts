// A test agent of the cancel extension, written with `ws` alone: it opts in (?cancel=1), streams each answer slowly
// (a token every 100 ms for 6 s, as agent-cancel's contract asks), then replies; told `cancel` for an event, it
// stops sending for it and goes on. With CANCEL_AGENT_BREAK it breaks one rule of the client role's cancel profile:
//   ignore - streams on and replies as if nothing came (CLC-002, a SHOULD);
//   close  - closes its connection on cancel, then connects again (CLC-001);
//   crash  - exits with code 1 on cancel (CLC-001).
import WebSocket from 'ws';

const broken = process.env.CANCEL_AGENT_BREAK;
const K = Number(process.env.BRIDGE_TIME_SCALE ?? 1);
const TOKENS = 60;
const EVERY_MS = 100;
setInterval(() => {}, 1 << 30);
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0));

function connect(): void {
  const ws = new WebSocket(`${process.env.BRIDGE_URL}/ws/agent?cancel=1`, {
    headers: { authorization: `Bearer ${process.env.BRIDGE_TOKEN}` },
  });
  const send = (frame: Record<string, unknown>) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(frame));
  const streams = new Map<string, NodeJS.Timeout>();
  let pinger: NodeJS.Timeout | undefined;
  ws.on('open', () => {
    pinger = setInterval(() => send({ type: 'ping' }), 30_000 / K);
  });
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { type: string; event_id?: string };
    const eventId = frame.event_id!;
    if (frame.type === 'event') {
      let sent = 0;
      const timer = setInterval(() => {
        if (sent++ < TOKENS) return void send({ type: 'token', event_id: eventId, token: '.' });
        clearInterval(timer);
        streams.delete(eventId);
        send({ type: 'reply', event_id: eventId, content: '', done: true });
      }, EVERY_MS);
      streams.set(eventId, timer);
    } else if (frame.type === 'cancel') {
      if (broken === 'ignore') return;
      if (broken === 'crash') process.exit(1);
      if (broken === 'close') return ws.close(1000, 'cancelled');
      clearInterval(streams.get(eventId));
      streams.delete(eventId);
    }
  });
  ws.on('error', () => {});
  ws.on('close', () => {
    clearInterval(pinger);
    for (const timer of streams.values()) clearInterval(timer);
    setTimeout(connect, 1_000 / K);
  });
}

connect();
