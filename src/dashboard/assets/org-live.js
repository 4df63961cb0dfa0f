// An organization's live picture (GET …/live, D8): each app's instances, each agent's connection and its last
// minute, read with the page's other lists every few seconds. Names come from those lists; the live answer has ids.
// The connection is said in words, not with a status badge: the agents table's badge stays a row's one status. Each
// connection named by an id can be closed on its own (H8).
import { enc } from './api.js';
import { h, rerender, table, time } from './dom.js';

/** AgentLastMinute counts the last 60 s of the event log. */
const LAST_MINUTE_S = 60;

const perSecond = (n) => (n / LAST_MINUTE_S).toFixed(2);

function connectionText(c) {
  return h(
    'span',
    { class: 'connection' },
    h('span', { class: 'nowrap' }, 'since ', time(c.connected_at)),
    ', last ping ',
    c.last_ping_at ? time(c.last_ping_at) : 'none yet',
    ', node ',
    h('code', {}, c.node_id),
  );
}

/** The connection's words and, when it has an id (a node of an older release gives none), its Disconnect button. */
function connectionItem(c, ownerName, actions) {
  if (!c.connection_id) return [connectionText(c)];
  return [
    connectionText(c),
    ' ',
    h(
      'button',
      {
        type: 'button',
        class: 'quiet small',
        'data-key': `disconnect:${c.connection_id}`,
        'aria-label': `Disconnect this connection of ${ownerName} (${c.connection_id})`,
        onclick: () => actions.disconnect(c, ownerName),
      },
      'Disconnect…',
    ),
  ];
}

/**
 * `{ element, show(live or the error of reading it, apps, agents) }`; `actions.testEvent(agent)` opens the test event
 * form for that agent, `actions.disconnect(connection, ownerName)` closes one connection after a confirmation.
 */
export function orgLive(actions) {
  const box = h('div', {}, h('p', {}, 'Loading…'));
  const element = h(
    'section',
    { 'aria-labelledby': 'live-title' },
    h('h2', { id: 'live-title' }, 'Live'),
    h(
      'p',
      { class: 'hint' },
      `Connections now, and each agent's events of the last ${LAST_MINUTE_S} seconds (from the event log).`,
    ),
    box,
  );
  let shown = '';
  return {
    element,
    show(live, apps, agents) {
      if (live instanceof Error) {
        shown = '';
        return rerender(box, h('p', { class: 'form-error' }, `Could not read the live picture: ${live.message}`));
      }
      const now = JSON.stringify([
        live,
        apps.map((a) => [a.app_id, a.name]),
        agents.map((a) => [a.agent_id, a.name, a.active]),
      ]);
      if (now === shown) return;
      shown = now;
      rerender(box, missingNodes(live), appsLive(live, apps, actions), agentsLive(live, agents, actions));
    },
  };
}

function missingNodes(live) {
  if (!live.missing_nodes.length) return null;
  return h(
    'p',
    { class: 'warning', role: 'alert' },
    `Not answering, so their connections are not counted: ${live.missing_nodes.join(', ')}.`,
  );
}

function appsLive(live, apps, actions) {
  const names = new Map(apps.map((a) => [a.app_id, a.name]));
  return table(
    'Apps: live instances',
    ['App', 'Instances', 'Connections'],
    live.apps.map((app) => {
      const name = names.get(app.app_id) ?? app.app_id;
      const shownConnections = app.connections.map((c) => h('li', {}, connectionItem(c, name, actions)));
      const more = app.instances - app.connections.length;
      return [
        name,
        h('span', { class: 'count', 'data-app': app.app_id }, String(app.instances)),
        app.connections.length
          ? h('ul', { class: 'plain' }, shownConnections, more > 0 ? h('li', {}, `and ${more} more`) : null)
          : '—',
      ];
    }),
    'No app yet.',
  );
}

function agentsLive(live, agents, actions) {
  const byId = new Map(agents.map((a) => [a.agent_id, a]));
  return table(
    `Agents: live connection and last ${LAST_MINUTE_S} seconds`,
    ['Agent', 'Connection', 'Events/s', 'Error rate', 'Actions'],
    live.agents.map(({ agent_id, connection, last_minute }) => {
      const agent = byId.get(agent_id);
      const name = agent?.name ?? agent_id;
      const { events, errors } = last_minute;
      return [
        name,
        connection
          ? [h('strong', { class: 'state on' }, 'connected'), ' ', connectionItem(connection, name, actions)]
          : h('strong', { class: 'state off' }, 'not connected'),
        perSecond(events),
        events ? `${Math.round((errors / events) * 100)}% (${errors} of ${events})` : '—',
        h(
          'div',
          { class: 'row-actions' },
          h(
            'a',
            { href: `#/events?agent_id=${enc(agent_id)}`, 'aria-label': `Recent events of ${name}` },
            'Recent events',
          ),
          agent?.active
            ? h(
                'button',
                {
                  type: 'button',
                  class: 'quiet',
                  'data-key': `test-event:${agent_id}`,
                  'aria-label': `Send a test event to ${name}`,
                  onclick: () => actions.testEvent(agent),
                },
                'Test event…',
              )
            : null,
        ),
      ];
    }),
    'No agent yet.',
  );
}
