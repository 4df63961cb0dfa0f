// The organizations: the list, searched and a page at a time, and creating one (which then opens its page).
import { api, enc } from './api.js';
import { announceOnNextView, h, heading, rerender, table, time } from './dom.js';
import { field, form, input, required } from './forms.js';
import { Listing, pager, searchBox } from './search.js';
import { FIELD_RULES } from './spec.js';

export function orgsView(main, query) {
  const listing = new Listing(query);
  const list = h('div', { 'aria-live': 'polite' }, h('p', {}, 'Loading…'));
  const create = form({
    label: 'Create an organization',
    submitLabel: 'Create organization',
    fields: [
      field({
        name: 'name',
        label: 'Organization name',
        control: input(),
        check: required('a name', FIELD_RULES.nameMaxLength),
      }),
    ],
    async send({ name }) {
      const org = await api.post('/admin/v1/organizations', { name: name.trim() });
      announceOnNextView(`Organization ${org.name} created. Register its apps and agents here.`);
      location.hash = `#/orgs/${enc(org.org_id)}`;
    },
  });

  const load = () =>
    api.get(listing.url('/admin/v1/organizations')).then(
      ({ organizations, next_after }) =>
        rerender(
          list,
          table(
            'Organizations, by ID',
            ['Name', 'Organization ID', 'Created'],
            organizations.map((o) => [
              h('a', { href: `#/orgs/${enc(o.org_id)}` }, o.name),
              h('code', {}, o.org_id),
              time(o.created_at),
            ]),
            listing.q
              ? `No organization’s name or ID contains “${listing.q}”.`
              : listing.after
                ? 'No more organizations.'
                : 'No organization yet: create the first one below.',
          ),
          pager(listing, {
            shown: organizations.length,
            nextAfter: next_after,
            what: organizations.length === 1 ? 'organization' : 'organizations',
            key: 'orgs',
            onPage: load,
          }),
        ),
      (err) => list.replaceChildren(h('p', { class: 'form-error', role: 'alert' }, err.message)),
    );

  main.append(
    heading('Organizations'),
    h(
      'p',
      {},
      'An organization holds apps and agents. Open one to register them, see their tokens once, keep allowlists, and rotate or deactivate tokens.',
    ),
    searchBox(listing, {
      label: 'Search organizations',
      hint: 'Part of a name or an ID, in any case.',
      onSearch: load,
    }),
    list,
    h('section', { 'aria-labelledby': 'new-org' }, h('h2', { id: 'new-org' }, 'Create an organization'), create),
  );
  load();
}
