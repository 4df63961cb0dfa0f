// Building the page with DOM calls only: every string from the API is set as text, never parsed as HTML, since
// names and descriptions are anybody's input.

/** `h('button', { class: 'primary', onclick: f }, 'Save')`: attributes, `on…` listeners, children as text or nodes. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  el.append(...nodes(children));
  return el;
}

function nodes(children) {
  return children
    .flat(Infinity)
    .filter((c) => c !== undefined && c !== null && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c))));
}

export function replace(parent, ...children) {
  parent.replaceChildren(...nodes(children));
}

let ids = 0;
/** A fresh id for label/aria wiring. */
export const uid = (prefix) => `${prefix}-${++ids}`;

/** `2026-11-22T13:00:00.000Z` -> `2026-11-22 13:00:00 UTC`: one unambiguous clock for every operator. */
export function utc(iso) {
  return iso ? iso.replace('T', ' ').replace(/(\.\d+)?Z$/, ' UTC') : '—';
}

export function time(iso) {
  return h('time', { datetime: iso ?? undefined }, utc(iso));
}

let forNextView;

/** Says it in the page's live region (screen readers read it; everyone sees it under the header). */
export function announce(text, kind = 'info') {
  const status = document.getElementById('status');
  status.className = `status ${kind}`;
  status.textContent = text;
}

/** Says it on the view being opened (what was said on the previous one goes). */
export function announceOnNextView(text) {
  forNextView = text;
}

export function startView() {
  announce(forNextView ?? '');
  forNextView = undefined;
}

/** A table with a caption and column headers; `rows` are arrays of cells (a cell is text, a node or a list). */
export function table(caption, headers, rows, empty) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('caption', {}, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((title) => h('th', { scope: 'col' }, title)),
        ),
      ),
      // Each cell names its column (data-label): on a narrow screen a row is a card and shows the names (CSS).
      h(
        'tbody',
        {},
        rows.map((cells) =>
          h(
            'tr',
            {},
            cells.map((cell, i) =>
              h(i === 0 ? 'th' : 'td', { scope: i === 0 ? 'row' : undefined, 'data-label': headers[i] }, cell),
            ),
          ),
        ),
      ),
    ),
  );
}

export function badge(text, kind) {
  return h('span', { class: `badge ${kind}` }, text);
}

/** A view's heading: focused on arrival, so keyboard and screen reader users start reading there. */
export function heading(text) {
  return h('h1', { tabindex: '-1' }, text);
}

/**
 * Replaces `container`'s content and puts the focus back on the control with the same `data-key` (a refresh must
 * not throw the keyboard user out of the table).
 */
export function rerender(container, ...children) {
  const key = container.contains(document.activeElement) ? document.activeElement.dataset.key : undefined;
  replace(container, ...children);
  if (key) container.querySelector(`[data-key="${CSS.escape(key)}"]`)?.focus();
}
