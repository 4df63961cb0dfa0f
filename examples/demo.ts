// `npm run demo`: the whole path in one process, as a user would wire it. It starts a bridge on a temporary SQLite
// file, provisions an organization, an app and an agent through the admin API, runs an example streaming agent
// through the connector and an example app through the app client, and prints the reply as it streams.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { AdminClient } from '../src/cli/admin-client.js';
import { connectApp, Connector, resolveConnectorConfig, type AgentContext, type AgentEvent } from '../src/sdk/index.js';

/** An example agent: answers by streaming a short explanation a few words at a time. */
async function tutor(event: AgentEvent, ctx: AgentContext): Promise<void> {
  const question = typeof event.payload.text === 'string' ? event.payload.text : 'your question';
  const answer = `You asked: "${question}". A prime number is a whole number greater than 1 whose only divisors are 1 and itself: 2, 3, 5, 7, 11 and 13 are the first few.`;
  for (const words of answer.match(/(\S+\s*){1,3}/g) ?? []) {
    ctx.token(words);
    await new Promise((resolve) => setTimeout(resolve, 40)); // as a model would, one fragment at a time
  }
  ctx.reply('', { model: 'demo-tutor' });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-demo-'));
  const adminToken = randomBytes(24).toString('base64url');
  const bridge = await startServer({
    ...loadConfig({}),
    port: 0,
    databaseUrl: `sqlite:${join(dir, 'bridge.sqlite')}`,
    adminToken,
    logLevel: 'warn',
  });
  const wsBase = `${bridge.url.replace(/^http/, 'ws')}/v1`;
  console.log(`bridge:   ${bridge.url} (database ${join(dir, 'bridge.sqlite')})`);

  const admin = new AdminClient(bridge.url, adminToken);
  const org = await admin.createOrganization('Demo School');
  const app = await admin.createApp(org.org_id, 'Classroom');
  const agent = await admin.createAgent(org.org_id, {
    name: 'Maths Tutor',
    description: 'Explains maths, one step at a time.',
  });
  console.log(`org:      ${org.org_id}\napp:      ${app.app_id}\nagent:    ${agent.agent_id}`);

  const connector = new Connector(
    resolveConnectorConfig({
      connection: { url: `${wsBase}/ws/agent` },
      agents: [{ agent_id: agent.agent_id, token: agent.token }],
    }),
    { handler: tutor },
  );
  await connector.start();

  const client = await connectApp({ url: wsBase, token: app.token });
  const agents = await client.discover();
  console.log(`app:      discovered ${agents.map((a) => `${a.name} (${a.agent_id})`).join(', ')}`);

  const handle = client.send({
    agentId: agent.agent_id,
    threadId: 'lesson-1',
    payload: { text: 'What is a prime number?' },
  });
  const accepted = await handle.accepted;
  console.log(`app:      accepted ${accepted.event_id}, session ${accepted.session_key}`);
  process.stdout.write('app:      streaming: ');
  for await (const fragment of handle.tokens) process.stdout.write(fragment);
  const reply = await handle.reply;
  console.log(
    `\napp:      reply (${reply.metadata.tokens_used} fragments, model ${reply.metadata.model}, ${reply.metadata.latency_ms} ms end to end)`,
  );
  const session = connector.sessions(agent.agent_id).get(`svc:${app.app_id}:lesson-1`);
  console.log(
    `agent:    runtime session ${session?.key} (expires ${session ? new Date(session.expiresAt).toISOString() : '?'})`,
  );

  await client.close();
  await connector.close();
  await bridge.close();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  console.error(`demo failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
