// One organization: its apps and agents with their live status (polled while the page is visible), searched and a
// page at a time, registration with the token shown once, allowlists, renaming, token rotation and deactivation,
// and deleting the organization.
import { api, enc } from './api.js';
import { agentFields } from './agent-fields.js';
import { editAllowlist } from './allowlist.js';
import { editAgent, renameApp } from './edit-dialogs.js';
import { announce, h, heading, rerender } from './dom.js';
import { field, form, input, required } from './forms.js';
import { deactivate, disconnect, rotate } from './lifecycle.js';
import { organizationEdits } from './org-edits.js';
import { orgLive } from './org-live.js';
import { agentsTable, appsTable } from './org-tables.js';
import { everything, Listing, pager, searchBox } from './search.js';
import { FIELD_RULES } from './spec.js';
import { testEventPanel } from './test-event.js';
import { tokenPanel } from './token-panel.js';

const POLL_MS = 3000;

export function orgView(main, orgId, query) {
  const state = { org: undefined, apps: [], agents: [], shown: '' };
  const lists = { apps: new Listing(query, 'apps'), agents: new Listing(query, 'agents') };
  const title = heading('Organization');
  const live = h('p', { class: 'live' }, 'Loading…');
  const appTokens = h('div', { class: 'tokens' });
  const agentTokens = h('div', { class: 'tokens' });
  const appsBox = h('div');
  const agentsBox = h('div');
  const base = `/admin/v1/organizations/${enc(orgId)}`;
  const testEvent = testEventPanel();
  const liveBox = orgLive({
    testEvent: (agent) => testEvent.choose(agent),
    async disconnect(connection, ownerName) {
      if (!(await disconnect(connection, ownerName))) return;
      announce(`A connection of ${ownerName} was closed; its client may reconnect.`);
      await refresh();
    },
  });

  const showToken = (slot, options) => {
    const { panel, focus } = tokenPanel(options);
    slot.prepend(panel);
    focus();
  };
  const actions = {
    async rotate(owner) {
      const result = await rotate(owner);
      if (!result) return;
      showToken(owner.kind === 'app' ? appTokens : agentTokens, {
        owner,
        token: result.token,
        previousEndsAt: result.previous_token_expires_at,
      });
      announce(`New token of ${owner.name} issued. It is shown once.`);
    },
    async deactivate(owner) {
      if (!(await deactivate(owner))) return;
      announce(`${owner.name} is deactivated.`);
      await refresh();
    },
    async allowlist(agent) {
      const updated = await editAllowlist(agent, await everything(`${base}/apps`, 'apps'));
      if (!updated) return;
      announce(`Allowlist of ${agent.name} saved.`);
      await refresh();
    },
    async rename(app) {
      const renamed = await renameApp(app);
      if (!renamed) return;
      announce(`App ${app.name} is now called ${renamed.name}.`);
      await refresh();
    },
    async edit(agent) {
      const changed = await editAgent(agent);
      if (!changed) return;
      announce(`Agent ${changed.name} saved.`);
      await refresh();
    },
  };

  /**
   * What a test event may be sent as and to: every app and agent of the organization, not only the pages shown. The
   * whole lists are read again only when the live picture's ids say the organization changed.
   */
  let whole = { key: '', apps: [], agents: [] };
  async function choices(appsPage, agentsPage, picture) {
    const partial = (listing, page) => listing.q || listing.after || page.next_after;
    if (!partial(lists.apps, appsPage) && !partial(lists.agents, agentsPage)) return [appsPage.apps, agentsPage.agents];
    const key =
      picture instanceof Error
        ? whole.key
        : JSON.stringify([picture.apps.map((a) => a.app_id), picture.agents.map((a) => a.agent_id)]);
    if (key !== whole.key || !whole.apps.length) {
      const [apps, agents] = await Promise.all([
        everything(`${base}/apps`, 'apps'),
        everything(`${base}/agents`, 'agents'),
      ]);
      whole = { key, apps, agents };
    }
    return [whole.apps, whole.agents];
  }

  async function refresh() {
    try {
      const picture = api.get(`${base}/live`).catch((err) => err); // the lists are shown even when it fails
      const [appsPage, agentsPage] = await Promise.all([
        api.get(lists.apps.url(`${base}/apps`)),
        api.get(lists.agents.url(`${base}/agents`)),
      ]);
      const [{ apps }, { agents }] = [appsPage, agentsPage];
      if (state.shown) sayWhoseStatusChanged(state, apps, agents);
      Object.assign(state, { apps, agents });
      const now = JSON.stringify([appsPage, agentsPage, lists.apps, lists.agents]);
      if (now !== state.shown) {
        state.shown = now;
        const paging = (kind, page) =>
          pager(lists[kind], {
            shown: page[kind].length,
            nextAfter: page.next_after,
            what: page[kind].length === 1 ? kind.slice(0, -1) : kind,
            key: kind,
            onPage: refresh,
          });
        rerender(appsBox, appsTable(apps, actions, lists.apps), paging('apps', appsPage));
        rerender(agentsBox, agentsTable(orgId, agents, apps, actions, lists.agents), paging('agents', agentsPage));
      }
      const livePicture = await picture;
      liveBox.show(livePicture, apps, agents);
      testEvent.update(...(await choices(appsPage, agentsPage, livePicture)));
      live.textContent = `Online status is live: this page asks the bridge every ${POLL_MS / 1000} seconds while it is open (last: ${new Date().toLocaleTimeString()}).`;
    } catch (err) {
      live.textContent = `Could not refresh: ${err.message}`;
    }
  }

  const appForm = form({
    label: 'Register an app',
    submitLabel: 'Register app',
    fields: [
      field({
        name: 'name',
        label: 'App name',
        control: input(),
        check: required('a name', FIELD_RULES.nameMaxLength),
      }),
    ],
    async send({ name }) {
      const app = await api.post(`${base}/apps`, { name: name.trim() });
      showToken(appTokens, { owner: { kind: 'app', id: app.app_id, name: app.name }, token: app.token });
      announce(`App ${app.name} registered. Its token is shown once.`);
      await refresh();
    },
  });
  const agentForm = form({
    label: 'Register an agent',
    submitLabel: 'Register agent',
    fields: agentFields(),
    async send({ name, description, ttl_days }) {
      const agent = await api.post(`${base}/agents`, { name: name.trim(), description, ttl_days });
      showToken(agentTokens, { owner: { kind: 'agent', id: agent.agent_id, name: agent.name }, token: agent.token });
      announce(`Agent ${agent.name} registered. Its token is shown once.`);
      await refresh();
    },
  });

  const search = (kind, label) =>
    searchBox(lists[kind], { label, hint: 'Part of a name or an ID, in any case.', onSearch: refresh });
  const named = (org) => {
    state.org = org;
    title.textContent = org ? org.name : `No organization ${orgId}`;
    document.getElementById('crumb-org').textContent = org?.name ?? orgId;
    document.title = `${title.textContent} · Bridge dashboard`;
  };
  const edits = organizationEdits(orgId, { org: () => state.org, renamed: named });

  main.append(
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: '#/orgs' }, 'Organizations'),
      ' / ',
      h('span', { id: 'crumb-org' }, orgId),
    ),
    title,
    h('p', {}, 'Organization ID ', h('code', {}, orgId), '. Apps may use only the agents of their own organization.'),
    edits.rename,
    live,
    liveBox.element,
    h(
      'section',
      { 'aria-labelledby': 'apps-title' },
      h('h2', { id: 'apps-title' }, 'Apps'),
      appTokens,
      search('apps', 'Search apps'),
      appsBox,
      h('h3', {}, 'Register an app'),
      appForm,
    ),
    h(
      'section',
      { 'aria-labelledby': 'agents-title' },
      h('h2', { id: 'agents-title' }, 'Agents'),
      agentTokens,
      search('agents', 'Search agents'),
      agentsBox,
      h('h3', {}, 'Register an agent'),
      agentForm,
    ),
    testEvent.element,
    edits.remove,
  );

  // The listing has no single-organization read: search for the ID, which finds it among those containing it.
  api.get(`/admin/v1/organizations?${new URLSearchParams({ q: orgId, limit: String(FIELD_RULES.pageMax) })}`).then(
    ({ organizations }) => named(organizations.find((o) => o.org_id === orgId)),
    (err) => announce(err.message, 'error'),
  );
  refresh();

  const timer = setInterval(() => document.visibilityState === 'visible' && refresh(), POLL_MS);
  const onVisible = () => document.visibilityState === 'visible' && refresh();
  document.addEventListener('visibilitychange', onVisible);
  return () => {
    clearInterval(timer);
    document.removeEventListener('visibilitychange', onVisible);
    testEvent.stop();
  };
}

/** Tells screen reader users (and everyone, under the header) when an app or agent comes online or goes offline. */
function sayWhoseStatusChanged(before, apps, agents) {
  const was = new Map([
    ...before.apps.map((a) => [a.app_id, a.online]),
    ...before.agents.map((a) => [a.agent_id, a.online]),
  ]);
  const changed = [...apps.map((a) => [a.app_id, a]), ...agents.map((a) => [a.agent_id, a])].filter(
    ([id, x]) => was.has(id) && was.get(id) !== x.online,
  );
  if (changed.length)
    announce(changed.map(([, x]) => `${x.name} is now ${x.online ? 'online' : 'offline'}.`).join(' '));
}
