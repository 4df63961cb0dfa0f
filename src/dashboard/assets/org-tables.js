// The apps and agents tables of an organization's page. Every button carries a data-key, so that the focus
// survives the page's refreshes.
import { enc } from './api.js';
import { badge, h, table, time } from './dom.js';

function status(record) {
  if (!record.active) return badge('deactivated', 'off');
  return record.online ? badge('online', 'online') : badge('offline', 'offline');
}

function button(label, key, ariaLabel, onclick, kind = 'quiet') {
  return h('button', { type: 'button', class: kind, 'data-key': key, 'aria-label': ariaLabel, onclick }, label);
}

function lifecycleButtons(owner, actions) {
  return [
    button('Rotate token', `rotate:${owner.kind}:${owner.id}`, `Rotate token of ${owner.name}`, () =>
      actions.rotate(owner),
    ),
    button(
      'Deactivate',
      `deactivate:${owner.kind}:${owner.id}`,
      `Deactivate ${owner.name}`,
      () => actions.deactivate(owner),
      'danger-quiet',
    ),
  ];
}

/** What an empty page says: nothing matches the search, the pages ended, or there is nothing yet. */
function nothing(listing, what, yet) {
  if (listing?.q) return `No ${what}’s name or ID contains “${listing.q}”.`;
  return listing?.after ? `No more ${what}s.` : yet;
}

export function appsTable(apps, actions, listing) {
  return table(
    'Apps: status is live',
    ['Name', 'App ID', 'Status', 'Registered', 'Actions'],
    apps.map((app) => {
      const owner = { kind: 'app', id: app.app_id, name: app.name };
      const rename = button('Rename…', `rename:${app.app_id}`, `Rename ${app.name}`, () => actions.rename(app));
      return [
        app.name,
        h('code', {}, app.app_id),
        status(app),
        time(app.created_at),
        h('div', { class: 'row-actions' }, app.active ? [rename, ...lifecycleButtons(owner, actions)] : '—'),
      ];
    }),
    nothing(listing, 'app', 'No app yet: register one below. Each app gets a token (rlk_…) to connect with.'),
  );
}

export function allowlistText(allowlist, apps) {
  if (allowlist === null) return 'Every app of the organization';
  if (!allowlist.length) return 'No app';
  const names = new Map(apps.map((a) => [a.app_id, a.name]));
  return allowlist.map((id) => names.get(id) ?? id).join(', ');
}

export function agentsTable(orgId, agents, apps, actions, listing) {
  return table(
    'Agents: status is live',
    ['Name', 'Agent ID', 'Session TTL', 'Allowlist', 'Status', 'Actions'],
    agents.map((agent) => {
      const owner = { kind: 'agent', id: agent.agent_id, name: agent.name };
      const links = [
        h(
          'a',
          {
            href: `#/orgs/${enc(orgId)}/agents/${enc(agent.agent_id)}/sessions`,
            'aria-label': `Sessions of ${agent.name}`,
          },
          'Sessions',
        ),
        h('a', { href: `#/events?agent_id=${enc(agent.agent_id)}`, 'aria-label': `Events of ${agent.name}` }, 'Events'),
      ];
      const allowlist = button('Allowlist…', `allowlist:${agent.agent_id}`, `Edit allowlist of ${agent.name}`, () =>
        actions.allowlist(agent),
      );
      const edit = button('Edit…', `edit:${agent.agent_id}`, `Edit ${agent.name}`, () => actions.edit(agent));
      return [
        [agent.name, agent.description ? h('span', { class: 'description' }, agent.description) : null],
        h('code', {}, agent.agent_id),
        `${agent.ttl_days} day${agent.ttl_days === 1 ? '' : 's'}`,
        allowlistText(agent.allowlist, apps),
        status(agent),
        h(
          'div',
          { class: 'row-actions' },
          agent.active ? [edit, allowlist, ...lifecycleButtons(owner, actions)] : null,
          links,
        ),
      ];
    }),
    nothing(listing, 'agent', 'No agent yet: register one below. Each agent gets a token (rla_…) to connect with.'),
  );
}
