// The event log, newest first, filtered by organization, app, agent, status, code and time, a page at a time. The
// filters and the paging cursor live in the address (#/events?…), so the browser's Back returns to the newer page.
// The first page can be followed live (tail.js).
import { api } from './api.js';
import { badge, h, heading, table, time } from './dom.js';
import { field, form, input } from './forms.js';
import { EVENT_ERROR_CODES, FIELD_RULES } from './spec.js';
import { timeRangeFields } from './time-range.js';
import { liveTail } from './tail.js';

const PAGE_SIZE = 50;
const FILTERS = ['org_id', 'app_id', 'agent_id', 'status', 'code', 'since', 'until'];
const ID = new RegExp(FIELD_RULES.idPattern);
const MAX = FIELD_RULES.idMaxLength;

export function eventsView(main, query) {
  const filters = Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? '']));
  const before = query.get('before');
  const results = h('div', { 'aria-live': 'polite', 'aria-busy': 'true' }, h('p', {}, 'Loading…'));

  const select = (options, value) =>
    h(
      'select',
      {},
      options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)),
    );
  const optional = (check) => (v) => (v === '' ? undefined : check(v));
  const filterForm = form({
    label: 'Filter the event log',
    submitLabel: 'Apply filters',
    fields: [
      field({
        name: 'org_id',
        label: 'Organization ID',
        control: input({ value: filters.org_id }),
        check: optional((v) =>
          ID.test(v) && v.length <= MAX
            ? undefined
            : `An organization ID has only a–z, 0–9 and -, at most ${MAX} characters.`,
        ),
      }),
      field({
        name: 'app_id',
        label: 'App ID',
        control: input({ value: filters.app_id }),
        check: optional((v) =>
          ID.test(v) && v.length <= MAX ? undefined : `An app ID has only a–z, 0–9 and -, at most ${MAX} characters.`,
        ),
      }),
      field({
        name: 'agent_id',
        label: 'Agent ID',
        control: input({ value: filters.agent_id }),
        check: optional((v) => (v.length <= MAX ? undefined : `At most ${MAX} characters.`)),
      }),
      field({
        name: 'status',
        label: 'Status',
        control: select(
          [
            ['', 'Any'],
            ['delivered', 'delivered'],
            ['rejected', 'rejected'],
          ],
          filters.status,
        ),
      }),
      field({
        name: 'code',
        label: 'Error code',
        control: select([['', 'Any'], ...EVENT_ERROR_CODES.map((c) => [c, c])], filters.code),
      }),
      ...timeRangeFields(filters),
    ],
    extra: h('p', { class: 'hint' }, 'Leave a filter empty to see every value.'),
    async send(values) {
      go(Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v.trim()])));
    },
  });
  filterForm.classList.add('filters');

  main.append(
    heading('Event log'),
    h(
      'p',
      {},
      'Every event an app sent, newest first: ',
      h('strong', {}, 'delivered'),
      ' (the app got accepted) or ',
      h('strong', {}, 'rejected'),
      ' (it got an error instead). Payloads are never stored, only their size.',
    ),
    filterForm,
    results,
  );

  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  for (const [k, v] of Object.entries(filters)) if (v) params.set(k, v);
  if (before) params.set('before', before);
  const read = () => api.get(`/admin/v1/events?${params}`);
  const show = (page) => results.replaceChildren(...render(page, filters, before));
  const tail = before ? undefined : liveTail({ read, show, results });
  if (tail) results.before(tail.element);
  read()
    .then(
      (page) => {
        show(page);
        tail?.seen(page);
      },
      (err) => results.replaceChildren(h('p', { class: 'form-error', role: 'alert' }, err.message)),
    )
    .finally(() => results.removeAttribute('aria-busy'));
  return () => tail?.stop();
}

function go(filters, before) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) query.set(k, v);
  if (before) query.set('before', before);
  const hash = `#/events${query.size ? `?${query}` : ''}`;
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = hash;
}

function render(page, filters, before) {
  const rows = page.events.map((e) => [
    time(e.received_at),
    h('code', {}, e.event_id),
    h('code', {}, e.app_id),
    h('code', {}, e.agent_id || '—'),
    badge(e.status, e.status === 'delivered' ? 'online' : 'off'),
    e.outcome,
    e.code ?? '—',
    e.latency_ms === null ? '—' : `${e.latency_ms} ms`,
    e.tokens_used ?? '—',
    `${e.payload_bytes} B`,
  ]);
  const nav = h(
    'div',
    { class: 'actions' },
    h('button', { type: 'button', class: 'quiet', onclick: () => go(filters, before) }, 'Refresh'),
    before ? h('button', { type: 'button', class: 'quiet', onclick: () => go(filters) }, 'Newest events') : null,
    page.next_before
      ? h('button', { type: 'button', class: 'quiet', onclick: () => go(filters, page.next_before) }, 'Older events')
      : null,
  );
  const caption = `Events${before ? ' (an older page)' : ''}, newest first`;
  return [
    table(
      caption,
      ['Received', 'Event ID', 'App', 'Agent', 'Status', 'Outcome', 'Code', 'Latency', 'Tokens', 'Payload'],
      rows,
      'No event matches these filters.',
    ),
    nav,
  ];
}
