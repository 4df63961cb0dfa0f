// The event log's live tail (D8): while on, the first page with the page's filters is read again every few
// seconds and the events that were not there before are marked; paused, nothing is asked.
import { badge, h } from './dom.js';

const POLL_MS = 3000;

/**
 * `{ element, seen(page), stop() }`: `read()` fetches the first page, `show(page)` renders it into `results`;
 * `seen(page)` tells the tail what the page shows before it goes live.
 */
export function liveTail({ read, show, results }) {
  let known = new Set(); // the previous read's events: the first page is newest first, so any other is new
  const button = h('button', { type: 'button', class: 'quiet' }, 'Live');
  const said = h(
    'span',
    { role: 'status', class: 'live' },
    'Not live: use Refresh, or Live to see new events as they are logged.',
  );
  let timer;
  let last = '';

  const remember = (page) => {
    known = new Set(page.events.map((e) => e.event_id));
    last = JSON.stringify(page.events);
  };

  async function tick() {
    if (document.visibilityState !== 'visible') return;
    let page;
    try {
      page = await read();
    } catch (err) {
      said.textContent = `Could not refresh: ${err.message}`;
      return;
    }
    if (!timer) return; // paused while the request was under way
    const fresh = new Set(page.events.map((e) => e.event_id).filter((id) => !known.has(id)));
    const when = new Date().toLocaleTimeString();
    if (JSON.stringify(page.events) !== last) {
      show(page);
      mark(results, fresh);
    }
    remember(page);
    said.textContent = fresh.size
      ? `Live: ${fresh.size} new event${fresh.size === 1 ? '' : 's'} (${when}).`
      : `Live: the log is read every ${POLL_MS / 1000} seconds (last: ${when}).`;
  }

  function start() {
    timer = setInterval(tick, POLL_MS);
    button.textContent = 'Pause';
    button.setAttribute('aria-label', 'Pause the live tail');
    results.removeAttribute('aria-live'); // the tail's own status says what arrived; the table is not read out again
    said.textContent = `Live: the log is read every ${POLL_MS / 1000} seconds while this page is visible.`;
    tick();
  }

  function stop() {
    clearInterval(timer);
    timer = undefined;
  }

  button.addEventListener('click', () => {
    if (!timer) return start();
    stop();
    button.textContent = 'Live';
    button.removeAttribute('aria-label');
    results.setAttribute('aria-live', 'polite');
    said.textContent = 'Paused: the log is not read until you go live again.';
  });

  return { element: h('div', { class: 'tail-bar' }, button, said), seen: remember, stop };
}

/** Marks the rows of these events (found by their event ID) as new, in colour and in words. */
function mark(results, ids) {
  for (const row of results.querySelectorAll('tbody tr')) {
    if (![...row.querySelectorAll('code')].some((code) => ids.has(code.textContent))) continue;
    row.classList.add('new');
    row.firstElementChild?.append(badge('new', 'new'));
  }
}
