#!/usr/bin/env node
// An example provisioning command for `bridge-conformance server --provision "node provision-admin-api.mjs"`
// (spec/conformance.yaml). It speaks both modes the runner knows:
//   - once per request: one JSON request on stdin, one JSON answer on stdout, exit 3 for "not supported";
//   - lines mode, when BRIDGE_PROVISION_LINES=1: the line {"provision_lines":1} first, then for each request line
//     ({"seq": n, "action": …}) one answer line ({"seq": n, "answer": …}, or {"seq": n, "unsupported": why} or
//     {"seq": n, "error": why}), until stdin ends. One process for the whole run instead of one per request (a run
//     moving the clock an hour makes ~120 requests).
// It drives this project's admin API (/admin/v1); to adapt it to your bridge, rewrite the `actions` below
// against your own admin interface. Plain Node 20 (global fetch), no dependencies.
//
//   BRIDGE_ADMIN_URL    http(s)://host:port of the admin API (default http://127.0.0.1:8080)
//   BRIDGE_ADMIN_TOKEN  its bearer token (default: ADMIN_TOKEN)
import { createInterface } from 'node:readline';

const base = `${(process.env.BRIDGE_ADMIN_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '')}/admin/v1`;
const token = process.env.BRIDGE_ADMIN_TOKEN ?? process.env.ADMIN_TOKEN;

class Unsupported extends Error {}

async function call(method, path, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (response.status === 404 && path === '/test/clock') throw new Unsupported('the bridge has no test clock');
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : {};
}

const actions = {
  async create({ fixtures }) {
    const answer = { orgs: {}, apps: {}, agents: {} };
    for (const name of fixtures.orgs) {
      const org = await call('POST', '/organizations', { name: `conformance ${name}` });
      answer.orgs[name] = { org_id: org.org_id };
    }
    for (const [name, org] of Object.entries(fixtures.apps)) {
      const app = await call('POST', `/organizations/${answer.orgs[org].org_id}/apps`, { name });
      answer.apps[name] = { app_id: app.app_id, token: app.token };
    }
    for (const [name, spec] of Object.entries(fixtures.agents)) {
      const body = {
        name: spec.name ?? name,
        ...(spec.description !== undefined && { description: spec.description }),
        ...(spec.ttl_days && { ttl_days: spec.ttl_days }),
      };
      const agent = await call('POST', `/organizations/${answer.orgs[spec.org].org_id}/agents`, body);
      answer.agents[name] = {
        agent_id: agent.agent_id,
        token: agent.token,
        name: agent.name,
        description: agent.description,
      };
      if (spec.allowlist)
        await call('PUT', `/agents/${agent.agent_id}/allowlist`, {
          app_ids: spec.allowlist.map((app) => answer.apps[app].app_id),
        });
    }
    return answer;
  },
  async rotate({ kind, id }) {
    return { token: (await call('POST', `/${kind}s/${id}/rotate-token`)).token };
  },
  async deactivate({ kind, id }) {
    await call('POST', `/${kind}s/${id}/deactivate`);
    return {};
  },
  async set_allowlist({ agent_id, app_ids }) {
    await call('PUT', `/agents/${agent_id}/allowlist`, { app_ids });
    return {};
  },
  async advance_clock({ ms }) {
    await call('POST', '/test/clock', { advance_ms: ms });
    return {};
  },
  async list_sessions({ agent_id }) {
    const sessions = [];
    for (let after = null; ;) {
      const page = await call(
        'GET',
        `/sessions?agent_id=${encodeURIComponent(agent_id)}&limit=500${after ? `&after=${encodeURIComponent(after)}` : ''}`,
      );
      sessions.push(
        ...page.sessions.map(({ session_key, agent_id, app_id, thread_id, created_at, expires_at }) => ({
          session_key,
          agent_id,
          app_id,
          thread_id,
          created_at,
          expires_at,
        })),
      );
      if (!(after = page.next_after)) return { sessions };
    }
  },
  async cleanup({ org_ids }) {
    for (const id of org_ids) await call('DELETE', `/organizations/${id}`);
    return {};
  },
};

/**
 * The answer line to one request: {"answer": …}, or why there is none ({"unsupported": why} or {"error": why}), with
 * the request's `seq` when it has one (lines mode numbers its requests).
 */
async function reply(input) {
  let seq;
  try {
    const request = JSON.parse(input);
    seq = request.seq;
    const action = actions[request.action];
    if (!action) throw new Unsupported(`unknown action ${request.action}`);
    return { seq, answer: await action(request) };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return err instanceof Unsupported ? { seq, unsupported: why } : { seq, error: why };
  }
}

if (process.env.BRIDGE_PROVISION_LINES === '1') {
  process.stdout.write('{"provision_lines":1}\n');
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity }))
    if (line.trim()) process.stdout.write(`${JSON.stringify(await reply(line))}\n`);
} else {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const r = await reply(input);
  if ('answer' in r) process.stdout.write(`${JSON.stringify(r.answer)}\n`);
  else {
    console.error(r.unsupported ?? r.error);
    process.exitCode = 'unsupported' in r ? 3 : 1;
  }
}
