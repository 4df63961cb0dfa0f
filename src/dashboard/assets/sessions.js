// The live sessions of one agent: one per app and thread, each with its expiry (the agent's session TTL).
import { api, enc } from './api.js';
import { h, heading, table, time } from './dom.js';
import { FIELD_RULES } from './spec.js';

/** The admin API's largest page: an agent with more sessions gets a pointer to the next page. */
const PAGE = FIELD_RULES.pageMax;

export function sessionsView(main, orgId, agentId) {
  const title = heading(`Sessions of ${agentId}`);
  const about = h(
    'p',
    {},
    'A session is one conversation: an app and a thread. It starts with the first accepted event and expires after the agent\u2019s session TTL; it is then deleted.',
  );
  const list = h('div', { 'aria-busy': 'true' }, h('p', {}, 'Loading…'));
  main.append(
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: '#/orgs' }, 'Organizations'),
      ' / ',
      h('a', { href: `#/orgs/${enc(orgId)}` }, orgId),
      ' / sessions',
    ),
    title,
    about,
    list,
    h('p', {}, h('a', { href: `#/events?agent_id=${enc(agentId)}` }, 'Events of this agent in the event log')),
  );
  Promise.all([
    api.get(`/admin/v1/organizations/${enc(orgId)}/agents?q=${enc(agentId)}&limit=${PAGE}`),
    api.get(`/admin/v1/sessions?agent_id=${enc(agentId)}&limit=${PAGE}`),
  ])
    .then(
      ([{ agents }, { sessions, next_after }]) => {
        const agent = agents.find((a) => a.agent_id === agentId);
        if (agent) {
          title.textContent = `Sessions of ${agent.name}`;
          document.title = `${title.textContent} · Bridge dashboard`;
          about.append(` For ${agent.name} the TTL is ${agent.ttl_days} day${agent.ttl_days === 1 ? '' : 's'}.`);
        }
        list.replaceChildren(
          table(
            'Live sessions, by session key',
            ['Thread', 'App', 'Session key', 'Started', 'Expires'],
            sessions.map((s) => [
              s.thread_id,
              h('code', {}, s.app_id),
              h('code', { class: 'key' }, s.session_key),
              time(s.created_at),
              time(s.expires_at),
            ]),
            'No live session: a session starts with an app\u2019s first accepted event for a thread.',
          ),
          ...(next_after
            ? [
                h(
                  'p',
                  {},
                  `The first ${PAGE} sessions by key are shown; the next page: bridge sessions --agent-id ${agentId} --after ${next_after}`,
                ),
              ]
            : []),
        );
      },
      (err) => list.replaceChildren(h('p', { class: 'form-error', role: 'alert' }, err.message)),
    )
    .finally(() => list.removeAttribute('aria-busy'));
}
