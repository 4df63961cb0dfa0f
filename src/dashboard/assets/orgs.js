// The organizations: the list, and creating one (which then opens its page).
import { api, enc } from './api.js';
import { announceOnNextView, h, heading, table, time } from './dom.js';
import { field, form, input, required } from './forms.js';
import { FIELD_RULES } from './spec.js';

export function orgsView(main) {
  const list = h('div', {}, h('p', {}, 'Loading…'));
  const create = form({
    label: 'Create an organization',
    submitLabel: 'Create organization',
    fields: [field({ name: 'name', label: 'Organization name', control: input(), check: required('a name', FIELD_RULES.nameMaxLength) })],
    async send({ name }) {
      const org = await api.post('/admin/v1/organizations', { name: name.trim() });
      announceOnNextView(`Organization ${org.name} created. Register its apps and agents here.`);
      location.hash = `#/orgs/${enc(org.org_id)}`;
    },
  });
  main.append(
    heading('Organizations'),
    h('p', {}, 'An organization holds apps and agents. Open one to register them, see their tokens once, keep allowlists, and rotate or deactivate tokens.'),
    list,
    h('section', { 'aria-labelledby': 'new-org' }, h('h2', { id: 'new-org' }, 'Create an organization'), create),
  );
  api.get('/admin/v1/organizations').then(
    ({ organizations }) =>
      list.replaceChildren(
        table(
          'Organizations',
          ['Name', 'Organization ID', 'Created'],
          organizations.map((o) => [h('a', { href: `#/orgs/${enc(o.org_id)}` }, o.name), h('code', {}, o.org_id), time(o.created_at)]),
          'No organization yet: create the first one below.',
        ),
      ),
    (err) => list.replaceChildren(h('p', { class: 'form-error' }, err.message)),
  );
}
