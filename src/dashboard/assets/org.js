// One organization: its apps and agents with their live status (polled while the page is visible), registration
// with the token shown once, allowlists, token rotation and deactivation.
import { api, enc } from './api.js';
import { editAllowlist } from './allowlist.js';
import { announce, h, heading, rerender } from './dom.js';
import { field, form, input, required } from './forms.js';
import { deactivate, rotate } from './lifecycle.js';
import { orgLive } from './org-live.js';
import { agentsTable, appsTable } from './org-tables.js';
import { FIELD_RULES } from './spec.js';
import { testEventPanel } from './test-event.js';
import { tokenPanel } from './token-panel.js';

const POLL_MS = 3000;

export function orgView(main, orgId) {
  const state = { org: undefined, apps: [], agents: [], shown: '' };
  const title = heading('Organization');
  const live = h('p', { class: 'live' }, 'Loading…');
  const appTokens = h('div', { class: 'tokens' });
  const agentTokens = h('div', { class: 'tokens' });
  const appsBox = h('div');
  const agentsBox = h('div');
  const base = `/admin/v1/organizations/${enc(orgId)}`;
  const testEvent = testEventPanel();
  const liveBox = orgLive({ testEvent: (agent) => testEvent.choose(agent) });

  const showToken = (slot, options) => {
    const { panel, focus } = tokenPanel(options);
    slot.prepend(panel);
    focus();
  };
  const actions = {
    async rotate(owner) {
      const result = await rotate(owner);
      if (!result) return;
      showToken(owner.kind === 'app' ? appTokens : agentTokens, { owner, token: result.token, previousEndsAt: result.previous_token_expires_at });
      announce(`New token of ${owner.name} issued. It is shown once.`);
    },
    async deactivate(owner) {
      if (!(await deactivate(owner))) return;
      announce(`${owner.name} is deactivated.`);
      await refresh();
    },
    async allowlist(agent) {
      const updated = await editAllowlist(agent, state.apps);
      if (!updated) return;
      announce(`Allowlist of ${agent.name} saved.`);
      await refresh();
    },
  };

  async function refresh() {
    try {
      const picture = api.get(`${base}/live`).catch((err) => err); // the lists are shown even when it fails
      const [{ apps }, { agents }] = await Promise.all([api.get(`${base}/apps`), api.get(`${base}/agents`)]);
      if (state.shown) sayWhoseStatusChanged(state, apps, agents);
      Object.assign(state, { apps, agents });
      const now = JSON.stringify([apps, agents]);
      if (now !== state.shown) {
        state.shown = now;
        rerender(appsBox, appsTable(apps, actions));
        rerender(agentsBox, agentsTable(orgId, agents, apps, actions));
      }
      liveBox.show(await picture, apps, agents);
      testEvent.update(apps, agents);
      live.textContent = `Online status is live: this page asks the bridge every ${POLL_MS / 1000} seconds while it is open (last: ${new Date().toLocaleTimeString()}).`;
    } catch (err) {
      live.textContent = `Could not refresh: ${err.message}`;
    }
  }

  const appForm = form({
    label: 'Register an app',
    submitLabel: 'Register app',
    fields: [field({ name: 'name', label: 'App name', control: input(), check: required('a name', FIELD_RULES.nameMaxLength) })],
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

  main.append(
    h('p', { class: 'crumbs' }, h('a', { href: '#/orgs' }, 'Organizations'), ' / ', h('span', { id: 'crumb-org' }, orgId)),
    title,
    h('p', {}, 'Organization ID ', h('code', {}, orgId), '. Apps may use only the agents of their own organization.'),
    live,
    liveBox.element,
    h('section', { 'aria-labelledby': 'apps-title' }, h('h2', { id: 'apps-title' }, 'Apps'), appTokens, appsBox, h('h3', {}, 'Register an app'), appForm),
    h('section', { 'aria-labelledby': 'agents-title' }, h('h2', { id: 'agents-title' }, 'Agents'), agentTokens, agentsBox, h('h3', {}, 'Register an agent'), agentForm),
    testEvent.element,
  );

  api.get('/admin/v1/organizations').then(({ organizations }) => {
    state.org = organizations.find((o) => o.org_id === orgId);
    title.textContent = state.org ? state.org.name : `No organization ${orgId}`;
    document.getElementById('crumb-org').textContent = state.org?.name ?? orgId;
    document.title = `${title.textContent} · Bridge dashboard`;
  }, (err) => announce(err.message, 'error'));
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

function agentFields() {
  const ttl = input({ type: 'number', inputmode: 'numeric', min: FIELD_RULES.ttlDaysMin, max: FIELD_RULES.ttlDaysMax, step: 1, value: FIELD_RULES.ttlDaysDefault });
  return [
    field({ name: 'name', label: 'Agent name', control: input(), check: required('a name', FIELD_RULES.nameMaxLength) }),
    field({
      name: 'description',
      label: 'Description (optional)',
      hint: 'What the agent does; apps see it in the directory.',
      control: h('textarea', { rows: 2 }),
      check: (v) => (v.length > FIELD_RULES.descriptionMaxLength ? `At most ${FIELD_RULES.descriptionMaxLength} characters (now ${v.length}).` : undefined),
    }),
    field({
      name: 'ttl_days',
      label: 'Session TTL (days)',
      hint: 'A conversation (app + thread) is kept this many days after its first event.',
      control: ttl,
      read: (c) => (c.value.trim() === '' ? NaN : Number(c.value)),
      check: (v) =>
        Number.isInteger(v) && v >= FIELD_RULES.ttlDaysMin && v <= FIELD_RULES.ttlDaysMax
          ? undefined
          : `Enter a whole number of days from ${FIELD_RULES.ttlDaysMin} to ${FIELD_RULES.ttlDaysMax}.`,
    }),
  ];
}

/** Tells screen reader users (and everyone, under the header) when an app or agent comes online or goes offline. */
function sayWhoseStatusChanged(before, apps, agents) {
  const was = new Map([...before.apps.map((a) => [a.app_id, a.online]), ...before.agents.map((a) => [a.agent_id, a.online])]);
  const changed = [...apps.map((a) => [a.app_id, a]), ...agents.map((a) => [a.agent_id, a])].filter(([id, x]) => was.has(id) && was.get(id) !== x.online);
  if (changed.length) announce(changed.map(([, x]) => `${x.name} is now ${x.online ? 'online' : 'offline'}.`).join(' '));
}
