// The organization's own changes on its page: renaming it, and deleting it with everything in it.
import { enc } from './api.js';
import { announce, announceOnNextView, h } from './dom.js';
import { count, deleteOrganization, renameOrganization } from './edit-dialogs.js';
import { everything } from './search.js';

/** `org()` is the organization as last read (undefined until then); `renamed(org)` shows a new name. */
export function organizationEdits(orgId, { org, renamed }) {
  const base = `/admin/v1/organizations/${enc(orgId)}`;
  const rename = async () => {
    if (!org()) return;
    const before = org().name;
    const changed = await renameOrganization(org());
    if (!changed) return;
    renamed(changed);
    announce(`${before} is now called ${changed.name}.`);
  };
  const remove = async () => {
    if (!org()) return;
    let contents;
    try {
      const [apps, agents] = await Promise.all([
        everything(`${base}/apps`, 'apps'),
        everything(`${base}/agents`, 'agents'),
      ]);
      contents = { apps, agents };
    } catch (err) {
      return announce(`Could not read what the organization holds: ${err.message}`, 'error');
    }
    const { name } = org();
    const deleted = await deleteOrganization(org(), contents);
    if (!deleted) return;
    announceOnNextView(
      `Organization ${name} deleted, with ${count(deleted.apps, 'app')} and ${count(deleted.agents, 'agent')}.`,
    );
    location.hash = '#/orgs';
  };
  return {
    rename: h(
      'div',
      { class: 'actions' },
      h(
        'button',
        { type: 'button', class: 'quiet', 'data-key': 'org:rename', onclick: rename },
        'Rename organization…',
      ),
    ),
    remove: h(
      'section',
      { class: 'danger-zone', 'aria-labelledby': 'delete-title' },
      h('h2', { id: 'delete-title' }, 'Delete this organization'),
      h(
        'p',
        {},
        'Removes it with all its apps and agents, their tokens, allowlists and sessions, and closes their live connections. This cannot be undone.',
      ),
      h(
        'button',
        { type: 'button', class: 'danger-quiet', 'data-key': 'org:delete', onclick: remove },
        'Delete organization…',
      ),
    ),
  };
}
