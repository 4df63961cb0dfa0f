// Renaming an organization or an app, changing an agent's name, description and session TTL (decision T5), and
// deleting an organization with everything in it (H6), each in a dialog that says what the change does.
import { api, enc } from './api.js';
import { agentFields } from './agent-fields.js';
import { openDialog } from './dialog.js';
import { h } from './dom.js';
import { field, input, required } from './forms.js';
import { FIELD_RULES } from './spec.js';

/** `3 apps`, `1 agent`. */
export const count = (n, what) => `${n} ${what}${n === 1 ? '' : 's'}`;

function nameField(label, value) {
  return field({
    name: 'name',
    label,
    control: input({ value }),
    check: required('a name', FIELD_RULES.nameMaxLength),
  });
}

/** Resolves with the renamed organization, or undefined when cancelled. */
export function renameOrganization(org) {
  const name = nameField('Organization name', org.name);
  return openDialog({
    title: `Rename ${org.name}`,
    content: [
      h('p', {}, 'Its ID ', h('code', {}, org.org_id), ' stays; apps and agents are not affected.'),
      name.element,
    ],
    confirmLabel: 'Save name',
    fields: [name],
    action: (values) => api.patch(`/admin/v1/organizations/${enc(org.org_id)}`, { name: values.name.trim() }),
  });
}

/** Resolves with the renamed app, or undefined when cancelled. */
export function renameApp(app) {
  const name = nameField('App name', app.name);
  return openDialog({
    title: `Rename ${app.name}`,
    content: [
      h('p', {}, 'Its ID ', h('code', {}, app.app_id), ' and its token stay; its connections are not affected.'),
      name.element,
    ],
    confirmLabel: 'Save name',
    fields: [name],
    action: (values) => api.patch(`/admin/v1/apps/${enc(app.app_id)}`, { name: values.name.trim() }),
  });
}

/** Resolves with the changed agent, or undefined when cancelled. Only the fields changed are sent. */
export function editAgent(agent) {
  const fields = agentFields(agent);
  return openDialog({
    title: `Edit ${agent.name}`,
    content: [
      h(
        'p',
        {},
        'Its ID ',
        h('code', {}, agent.agent_id),
        ' and its token stay; apps see the new name and description in the directory at once.',
      ),
      fields.map((f) => f.element),
    ],
    confirmLabel: 'Save changes',
    fields,
    action: async (values) => {
      const wanted = { ...values, name: values.name.trim() };
      const changed = Object.fromEntries(Object.entries(wanted).filter(([key, value]) => value !== agent[key]));
      return Object.keys(changed).length ? api.patch(`/admin/v1/agents/${enc(agent.agent_id)}`, changed) : agent;
    },
  });
}

/**
 * `contents` is `{ apps, agents }`, every app and agent of the organization. Resolves with the deletion's counts
 * (`OrganizationDeleted`), or undefined when cancelled. The operator types the organization's name or ID first.
 */
export function deleteOrganization(org, { apps, agents }) {
  const online = [
    ...apps.filter((a) => a.online).map((a) => `app ${a.name}`),
    ...agents.filter((a) => a.online).map((a) => `agent ${a.name}`),
  ];
  const typed = field({
    name: 'confirmation',
    label: `Type the organization's name (${org.name}) or its ID to confirm`,
    control: input(),
    check: (v) =>
      [org.name, org.org_id].includes(v.trim()) ? undefined : `Type “${org.name}” or “${org.org_id}” exactly.`,
  });
  return openDialog({
    title: `Delete ${org.name}?`,
    content: [
      h(
        'p',
        {},
        'This removes the organization ',
        h('strong', {}, org.name),
        ' (',
        h('code', {}, org.org_id),
        ') with ',
        h('strong', {}, `${count(apps.length, 'app')} and ${count(agents.length, 'agent')}`),
        ', their tokens, allowlists and sessions. The event log keeps its rows until they age out.',
      ),
      online.length
        ? [
            h(
              'p',
              {},
              h('strong', {}, `${online.length} of them ${online.length === 1 ? 'is' : 'are'} online now`),
              ': their live connections close at once (TOKEN_REVOKED), and events an agent is answering end with AGENT_OFFLINE.',
            ),
            h(
              'ul',
              { class: 'online-now' },
              online.map((who) => h('li', {}, who)),
            ),
          ]
        : h('p', {}, 'None of its apps and agents is online now.'),
      h(
        'p',
        { class: 'warning' },
        h('strong', {}, 'This cannot be undone: '),
        'the tokens stop working for good and the IDs are gone.',
      ),
      typed.element,
    ],
    confirmLabel: 'Delete organization',
    danger: true,
    fields: [typed],
    action: () => api.delete(`/admin/v1/organizations/${enc(org.org_id)}`),
  });
}
