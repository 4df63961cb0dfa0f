// Provisioning script for the other bridge: one JSON request on stdin, one JSON answer on stdout, exit 0;
// exit 3 = action not supported; exit 1 with a reason on stderr for anything else. With BRIDGE_PROVISION_LINES=1 it
// speaks lines mode instead (spec/conformance.yaml ProvisionLinesHello): one process for the whole run. It translates
// the provisioning protocol into the bridge's own operator interface (see ops.ts).
// Plain JavaScript, so that a start costs one `node` and no compiler.
// Usage: OTHER_BRIDGE_ADMIN_URL=http://127.0.0.1:PORT/_ops node test/conformance/other-bridge/provision.mjs
import { createInterface } from 'node:readline';
import { text } from 'node:stream/consumers';

class Unsupported extends Error {}

async function op(body) {
  const url = process.env['OTHER_BRIDGE_ADMIN_URL'];
  if (!url) throw new Error('OTHER_BRIDGE_ADMIN_URL is not set');
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-ops-key': 'other-bridge-ops-key' },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  if (!res.ok) throw new Error(`${body['op']}: HTTP ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function create(fixtures = {}) {
  const out = { orgs: {}, apps: {}, agents: {} };
  for (const name of fixtures['orgs'] ?? []) {
    out['orgs'][name] = { org_id: (await op({ op: 'mkorg', label: name }))['organisation']['ref'] };
  }
  const orgRef = (name) => {
    const ref = out['orgs'][name]?.org_id;
    if (!ref) throw new Error(`unknown org fixture: ${name}`);
    return ref;
  };
  for (const [name, org] of Object.entries(fixtures['apps'] ?? {})) {
    const { client } = await op({ op: 'mkclient', org: orgRef(org), kind: 'app', label: name });
    out['apps'][name] = { app_id: client.ref, token: client.secret };
  }
  for (const [name, spec] of Object.entries(fixtures['agents'] ?? {})) {
    const allow = spec['allowlist'] == null ? null : spec['allowlist'].map((app) => out['apps'][app]?.app_id ?? app);
    const { client } = await op({
      op: 'mkclient',
      org: orgRef(spec['org']),
      kind: 'agent',
      label: spec['name'] ?? name,
      about: spec['description'] ?? '',
      ttl: spec['ttl_days'],
      allow,
    });
    out['agents'][name] = { agent_id: client.ref, token: client.secret, name: client.label, description: client.about };
  }
  return out;
}

const iso = (ms) => new Date(ms).toISOString();

async function handle(req) {
  switch (req['action']) {
    case 'create':
      return create(req['fixtures']);
    case 'rotate':
      return { token: (await op({ op: 'rotate', ref: req['id'] }))['secret'] };
    case 'deactivate':
      await op({ op: 'disable', ref: req['id'] });
      return {};
    case 'set_allowlist':
      await op({ op: 'allow', ref: req['agent_id'], apps: req['app_ids'] ?? null });
      return {};
    case 'advance_clock':
      await op({ op: 'tick', ms: req['ms'] });
      return {};
    case 'cleanup':
      for (const org of req['org_ids'] ?? []) await op({ op: 'drop', org });
      return {};
    case 'list_sessions': {
      const { rows } = await op({ op: 'sessions', agent: req['agent_id'] });
      return {
        sessions: rows.map((r) => ({
          session_key: r['key'],
          agent_id: r['agent'],
          app_id: r['app'],
          thread_id: r['thread'],
          created_at: iso(r['born']),
          expires_at: iso(r['dies']),
        })),
      };
    }
    default:
      throw new Unsupported(`action not supported: ${String(req['action'])}`);
  }
}

/** The answer line to one request: {answer} or {unsupported}/{error}, with the request's seq (lines mode) if any. */
async function reply(input) {
  let seq;
  try {
    const req = JSON.parse(input);
    if (typeof req !== 'object' || req === null) throw new Error('the request must be a JSON object');
    seq = req['seq'];
    return { seq, answer: await handle(req) };
  } catch (e) {
    return e instanceof Unsupported ? { seq, unsupported: e.message } : { seq, error: e.message };
  }
}

if (process.env['BRIDGE_PROVISION_LINES'] === '1') {
  process.stdout.write('{"provision_lines":1}\n');
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity }))
    if (line.trim()) process.stdout.write(`${JSON.stringify(await reply(line))}\n`);
} else {
  const r = await reply(await text(process.stdin));
  if ('answer' in r) process.stdout.write(`${JSON.stringify(r.answer)}\n`);
  else {
    process.stderr.write(`provision: ${r.unsupported ?? r.error}\n`);
    process.exitCode = 'unsupported' in r ? 3 : 1;
  }
}
