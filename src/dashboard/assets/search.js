// Finding in long lists (D11): a search box and a pager for the listings of organizations, apps and agents, one
// page at a time by cursor (`q`, `limit`, `after`; the answer's `next_after`). What is searched and the page shown
// are kept in the address (#/orgs?q=acme&after=…, #/orgs/<id>?agents_q=…), so a reload shows the same page.
import { api } from './api.js';
import { h, uid } from './dom.js';
import { FIELD_RULES } from './spec.js';

/** A page of 25: a phone shows a few cards at a time, a laptop a screenful of rows. */
export const PAGE_SIZE = 25;

/** One listing's search and page, read from the address under `prefix` (`q` and `after`, or `apps_q`, …). */
export class Listing {
  constructor(query, prefix = '') {
    this.name = (key) => (prefix ? `${prefix}_${key}` : key);
    this.q = query.get(this.name('q')) ?? '';
    this.after = query.get(this.name('after')) ?? '';
    this.before = []; // the cursors of the pages before this one, since the page was opened
  }

  /** The admin API's address of the page shown. */
  url(path) {
    const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (this.q) params.set('q', this.q);
    if (this.after) params.set('after', this.after);
    return `${path}?${params}`;
  }

  search(q) {
    Object.assign(this, { q, after: '', before: [] });
    this.keep();
  }

  next(after) {
    this.before.push(this.after);
    this.after = after;
    this.keep();
  }

  previous() {
    this.after = this.before.pop() ?? '';
    this.keep();
  }

  /** Writes the search and page into the address without a navigation (the view stays, only the list changes). */
  keep() {
    const [path, search] = location.hash.split('?');
    const params = new URLSearchParams(search ?? '');
    for (const [key, value] of [
      ['q', this.q],
      ['after', this.after],
    ]) {
      if (value) params.set(this.name(key), value);
      else params.delete(this.name(key));
    }
    history.replaceState(history.state, '', `${path}${params.size ? `?${params}` : ''}`);
  }
}

/** The search box of a listing; `onSearch()` runs once `listing` holds the new text. */
export function searchBox(listing, { label, hint, onSearch }) {
  const id = uid('search');
  const max = FIELD_RULES.searchMaxLength;
  const box = h('input', {
    id,
    type: 'search',
    value: listing.q,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': `${id}-hint ${id}-error`,
  });
  const error = h('p', { class: 'field-error', id: `${id}-error` });
  const clear = h('button', { type: 'button', class: 'quiet', hidden: !listing.q, onclick: () => go('') }, 'Show all');
  const go = (text) => {
    if (text.length > max) {
      error.textContent = `At most ${max} characters (now ${text.length}).`;
      box.setAttribute('aria-invalid', 'true');
      return box.focus();
    }
    error.textContent = '';
    box.removeAttribute('aria-invalid');
    box.value = text;
    clear.hidden = !text;
    listing.search(text);
    onSearch();
  };
  const element = h(
    'form',
    { role: 'search', 'aria-label': label, class: 'search', novalidate: true },
    h(
      'div',
      { class: 'field' },
      h('label', { for: id }, label),
      h('p', { class: 'hint', id: `${id}-hint` }, hint),
      box,
      error,
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Search'), clear),
  );
  element.addEventListener('submit', (event) => {
    event.preventDefault();
    go(box.value.trim());
  });
  return element;
}

/**
 * What the page shows and the buttons to the pages around it. `what` is the plural (`organizations`); `key` names
 * the buttons' data-key, so the focus stays on them when the list is drawn again.
 */
export function pager(listing, { shown, nextAfter, what, key, onPage }) {
  if (!listing.q && !listing.after && !nextAfter) return null; // one page, all of it: the table says it all
  const where = `${shown} ${what}${listing.q ? ` matching “${listing.q}”` : ''}${listing.after ? ` after ${listing.after}` : ''}${nextAfter ? '; more on the next page' : ''}.`;
  const go = (move) => () => {
    move();
    onPage();
  };
  return h(
    'div',
    { class: 'pager' },
    h('span', { class: 'where' }, where),
    listing.after
      ? h(
          'button',
          { type: 'button', class: 'quiet', 'data-key': `${key}:previous`, onclick: go(() => listing.previous()) },
          listing.before.length ? 'Previous page' : 'First page',
        )
      : null,
    nextAfter
      ? h(
          'button',
          { type: 'button', class: 'quiet', 'data-key': `${key}:next`, onclick: go(() => listing.next(nextAfter)) },
          'Next page',
        )
      : null,
  );
}

/** Every item of a listing, page after page (what a deletion or an allowlist needs to see whole). */
export async function everything(path, items) {
  const all = [];
  for (let after = ''; ;) {
    const page = await api.get(
      `${path}?${new URLSearchParams({ limit: String(FIELD_RULES.pageMax), ...(after ? { after } : {}) })}`,
    );
    all.push(...page[items]);
    if (!page.next_after) return all;
    after = page.next_after;
  }
}
