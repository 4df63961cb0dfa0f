// Steps that act on the target beside the WebSocket: its HTTP directory, and the provisioning actions (token
// rotation, deactivation, allowlists, sessions) the provisioning means performs.
import { v1Base } from '../target.js';
import { judge, value, type StepHandler } from './env.js';

export const http: StepHandler<'http'> = async (args, env) => {
  const { placement } = env;
  const method = args.method ?? 'GET';
  const token = args.token === undefined || args.token === 'none' ? undefined : String(value(env, args.token));
  const path = String(value(env, args.path));
  const node = placement.http();
  const answer = await env.ctx.target.call(method, `${v1Base(node)}${path}`, token);
  const on = placement.several ? ` on ${node}` : '';
  env.transcript.add(
    'http',
    'note',
    `${method} ${path}${on} -> ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`,
  );
  if (args.status !== undefined) judge(env, args.status, answer.status, `${method} ${path} status`);
  if (args.expect !== undefined) judge(env, args.expect, answer.body, `${method} ${path} body`);
};

export const rotateToken: StepHandler<'rotateToken'> = async (args, env) => {
  const name = args.target;
  const kind = env.kinds.get(name)!;
  const token = await env.ctx.provisioner.rotate(kind, String(env.bindings.get(`${name}.${kind}_id`)));
  env.bindings.set(`${name}.previous_token`, env.bindings.get(`${name}.token`)).set(`${name}.token`, token);
};

export const deactivate: StepHandler<'deactivate'> = (args, env) => {
  const kind = env.kinds.get(args.target)!;
  return env.ctx.provisioner.deactivate(kind, String(env.bindings.get(`${args.target}.${kind}_id`)));
};

export const setAllowlist: StepHandler<'setAllowlist'> = (args, env) => {
  const ids = args.apps === null ? null : args.apps.map((a) => String(env.bindings.get(`${a}.app_id`)));
  return env.ctx.provisioner.setAllowlist(String(env.bindings.get(`${args.agent}.agent_id`)), ids);
};

export const listSessions: StepHandler<'listSessions'> = async (args, env) => {
  const sessions = await env.ctx.provisioner.listSessions(String(env.bindings.get(`${args.agent}.agent_id`)));
  env.transcript.add('provision', 'note', `sessions of ${args.agent}: ${JSON.stringify(sessions).slice(0, 500)}`);
  judge(env, args.expect, sessions, `sessions of ${args.agent}`);
};
