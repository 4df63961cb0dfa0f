// The audit trail (D10): who changed what and when, newest first, a page at a time. The page's cursor lives in the
// address (#/audit?before=…), so the browser's Back returns to the newer page.
import { api } from './api.js';
import { h, heading, table, time } from './dom.js';
import { ownSession } from './own-session.js';

const PAGE_SIZE = 50;

export function auditView(main, query) {
  const before = query.get('before') ?? '';
  const results = h('div', { 'aria-live': 'polite', 'aria-busy': 'true' }, h('p', {}, 'Loading…'));
  main.append(
    heading('Audit trail'),
    h(
      'p',
      {},
      'Every change made through the admin API or this dashboard, and every sign-in and sign-out, newest first: who (the admin token, or a dashboard session by a fingerprint of it), what, on what, and when. Tokens and payloads are never recorded.',
    ),
    results,
  );
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (before) params.set('before', before);
  Promise.all([api.get(`/admin/v1/audit?${params}`), ownSession()])
    .then(
      ([page, mine]) => results.replaceChildren(...render(page, before, mine)),
      (err) => results.replaceChildren(h('p', { class: 'form-error', role: 'alert' }, err.message)),
    )
    .finally(() => results.removeAttribute('aria-busy'));
}

function who(actor, mine) {
  if (actor.kind !== 'dashboard_session') return 'admin token';
  const session = `dashboard session ${actor.session}`;
  return actor.session === mine ? [session, ' ', h('span', { class: 'mine' }, '(this session)')] : session;
}

/** `{ name: 'Acme', previous: { name: 'Acme School' } }` -> `name: Acme; previous: (name: Acme School)`. */
function detailText(detail) {
  const parts = Object.entries(detail).map(([key, value]) => `${key}: ${valueText(value)}`);
  return parts.length ? parts.join('; ') : '—';
}

function valueText(value) {
  if (value === null || value === undefined) return '—';
  if (Array.isArray(value)) return value.length ? value.map(valueText).join(', ') : 'none';
  if (typeof value === 'object')
    return `(${Object.entries(value)
      .map(([key, v]) => `${key}: ${valueText(v)}`)
      .join(', ')})`;
  return String(value);
}

function go(before) {
  const hash = `#/audit${before ? `?before=${before}` : ''}`;
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = hash;
}

function render(page, before, mine) {
  const rows = page.entries.map((e) => [
    time(e.at),
    who(e.actor, mine),
    h('code', {}, e.action),
    e.target ? h('code', {}, e.target) : '—',
    detailText(e.detail),
  ]);
  const nav = h(
    'div',
    { class: 'actions' },
    h('button', { type: 'button', class: 'quiet', onclick: () => go(before) }, 'Refresh'),
    before ? h('button', { type: 'button', class: 'quiet', onclick: () => go() }, 'Newest entries') : null,
    page.next_before
      ? h('button', { type: 'button', class: 'quiet', onclick: () => go(page.next_before) }, 'Older entries')
      : null,
  );
  return [
    table(
      `Admin actions${before ? ' (an older page)' : ''}, newest first`,
      ['When', 'Who', 'What', 'Target', 'Detail'],
      rows,
      'No admin action recorded yet.',
    ),
    nav,
  ];
}
