// The allowlist editor of one agent: open to every app of its organization (no allowlist), or only the chosen apps.
import { api, enc } from './api.js';
import { openDialog } from './dialog.js';
import { h, uid } from './dom.js';

/** Resolves with the updated agent, or undefined when cancelled. */
export function editAllowlist(agent, apps) {
  const open = agent.allowlist === null;
  const chosen = new Set(agent.allowlist ?? []);
  // Deactivated apps can no longer connect; they are offered only while they are still on the list, to take off.
  const offered = apps.filter((a) => a.active || chosen.has(a.app_id));
  const mode = uid('mode');
  const everyApp = h('input', { type: 'radio', name: mode, id: `${mode}-all`, value: 'all', checked: open });
  const someApps = h('input', { type: 'radio', name: mode, id: `${mode}-some`, value: 'some', checked: !open });
  const boxes = offered.map((app) => {
    const id = uid('allow');
    const box = h('input', { type: 'checkbox', id, value: app.app_id, checked: chosen.has(app.app_id) });
    return {
      box,
      row: h(
        'div',
        { class: 'check' },
        box,
        h('label', { for: id }, app.name, ' ', h('code', {}, app.app_id), app.active ? '' : ' (deactivated)'),
      ),
    };
  });
  const note = h('p', { class: 'hint', 'aria-live': 'polite' });
  const appsSet = h(
    'fieldset',
    { class: 'apps' },
    h('legend', {}, 'Apps that may use it'),
    boxes.length ? boxes.map((b) => b.row) : h('p', { class: 'empty' }, 'This organization has no app yet.'),
  );
  const sync = () => {
    appsSet.disabled = everyApp.checked;
    const count = boxes.filter((b) => b.box.checked).length;
    note.textContent = everyApp.checked
      ? 'Every app of the organization may send events to this agent, including apps registered later.'
      : count === 0
        ? 'No app chosen: no app will be able to send events to this agent.'
        : `${count} app${count === 1 ? '' : 's'} chosen; every other app gets PERMISSION_DENIED.`;
  };
  for (const input of [everyApp, someApps, ...boxes.map((b) => b.box)]) input.addEventListener('change', sync);
  sync();

  const content = [
    h(
      'fieldset',
      {},
      h('legend', {}, `Which apps may send events to “${agent.name}”?`),
      h(
        'div',
        { class: 'check' },
        everyApp,
        h('label', { for: everyApp.id }, 'Every app of the organization (no allowlist)'),
      ),
      h('div', { class: 'check' }, someApps, h('label', { for: someApps.id }, 'Only the apps chosen below')),
    ),
    appsSet,
    note,
  ];
  return openDialog({
    title: `Allowlist of ${agent.name}`,
    content,
    confirmLabel: 'Save allowlist',
    action: () => {
      const appIds = everyApp.checked ? null : boxes.filter((b) => b.box.checked).map((b) => b.box.value);
      return api.put(`/admin/v1/agents/${enc(agent.agent_id)}/allowlist`, { app_ids: appIds });
    },
  });
}
