// An example handler for `bridge-connector --handler examples/echo-agent.ts`: streams "You said: …" back word by
// word, then replies with empty content, so the bridge joins the streamed tokens into the app's reply (W10).
// The payload is opaque to the bridge; this agent reads `payload.text` when it is a string, else echoes the JSON.
import type { AgentContext, AgentEvent } from '../src/sdk/index.js';

export default function echo(event: AgentEvent, ctx: AgentContext): void {
  const text = typeof event.payload.text === 'string' ? event.payload.text : JSON.stringify(event.payload);
  const turns = typeof event.session.data.turns === 'number' ? event.session.data.turns + 1 : 1;
  event.session.data.turns = turns;
  ctx.stream(`You said: ${text}`, 1);
  ctx.reply('', { model: 'echo', tokens_used: ctx.tokenCount });
}
