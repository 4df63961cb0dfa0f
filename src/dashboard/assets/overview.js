// The landing view: the bridge's numbers now and over the last hour (D8), asked for every overviewSampleMs while
// the page is visible, only the samples newer than the ones held. Every node's numbers are added up; with several
// nodes a table shows each.
import { api } from './api.js';
import { lineChart } from './chart.js';
import { h, heading, replace, table, utc } from './dom.js';
import { errorsSince, OverviewHistory } from './overview-data.js';
import { LIMITS } from './spec.js';

/** How far back "error codes in the last minutes" looks. */
const ERRORS_MINUTES = 5;
/** The shortest span a chart shows: a bridge that started a minute ago gets a readable line, not a sliver. */
const MIN_SPAN_MINUTES = 5;

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const decimal = (n) => (n < 10 && !Number.isInteger(n) ? n.toFixed(1) : String(Math.round(n)));
const duration = (ms) =>
  ms === null || ms === undefined ? '—' : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
const errorCount = (sample) => Object.values(sample.errors).reduce((n, v) => n + v, 0);

export function overviewView(main) {
  const history = new OverviewHistory();
  const live = h('p', { class: 'live' }, 'Loading…');
  const missing = h('div');
  const tiles = h('div', { class: 'tiles' });
  const nodesBox = h('div');
  main.append(
    heading('Overview'),
    h(
      'p',
      {},
      'What the bridge is doing now and over the last hour: connections, events, errors and latency, added up over every node.',
    ),
    live,
    missing,
    tiles,
    nodesBox,
  );

  let busy = false;
  async function refresh() {
    if (busy) return;
    busy = true;
    try {
      const after = history.after();
      history.add(await api.get(`/admin/v1/overview${after === undefined ? '' : `?after=${after}`}`));
      render(history, { live, missing, tiles, nodesBox });
    } catch (err) {
      live.textContent = `Could not refresh: ${err.message}`;
    } finally {
      busy = false;
    }
  }
  refresh();

  const timer = setInterval(() => document.visibilityState === 'visible' && refresh(), LIMITS.overviewSampleMs);
  const onVisible = () => document.visibilityState === 'visible' && refresh();
  document.addEventListener('visibilitychange', onVisible);
  return () => {
    clearInterval(timer);
    document.removeEventListener('visibilitychange', onVisible);
  };
}

function render(history, { live, missing, tiles, nodesBox }) {
  const overview = history.latest;
  const samples = history.sum();
  const now = history.now();
  const last = samples.at(-1);
  const perSecond = (n) => n / (overview.sample_ms / 1000);
  const nodes = overview.nodes.length;
  // The last hour, or less while the samples held cover less.
  const from = Math.max(
    overview.at - overview.window_ms,
    Math.min(samples[0]?.at ?? overview.at, overview.at - MIN_SPAN_MINUTES * 60_000),
  );
  const chartOf = (title, series, format) => {
    const latest = series.map((s) => `${s.name} ${format(s.points.at(-1)?.value)}`).join(', ');
    const highest = Math.max(...series.flatMap((s) => s.points.map((p) => p.value ?? 0)), 0);
    const summary = samples.length
      ? `${latest} now; at most ${format(highest)} in the last ${Math.round((overview.at - from) / 60_000)} minutes.`
      : 'no sample yet.';
    return lineChart({ title, series, from, to: overview.at, gapMs: 2 * overview.sample_ms, format, summary });
  };
  const over = (field, f = (v) => v) => samples.map((s) => ({ at: s.at, value: f(s[field], s) }));
  const count = (n) => (n === null || n === undefined ? '—' : decimal(n));
  const rate = (n) => (n === null || n === undefined ? '—' : `${decimal(n)}/s`);
  const interval = `in the last ${overview.sample_ms / 1000} s`;
  const timed = last !== undefined && last.latency_p50_ms !== null;
  const recentErrors = errorsSince(samples, overview.at - ERRORS_MINUTES * 60_000);

  live.textContent = `Live: the page asks the bridge every ${overview.sample_ms / 1000} seconds while it is open. Newest sample ${last ? utc(new Date(last.at).toISOString()) : 'not taken yet'}${nodes > 1 ? `; the sum of ${nodes} nodes` : ''}.`;
  replace(
    missing,
    overview.missing_nodes.length
      ? h(
          'p',
          { class: 'warning', role: 'alert' },
          `Not answering, so left out of these numbers: ${overview.missing_nodes.join(', ')}.`,
        )
      : null,
  );
  replace(
    tiles,
    tile(
      'Apps',
      plural(now.apps_online, 'app') + ' online',
      `${plural(now.app_connections, 'connection')} (instances)`,
      chartOf('App connections', [{ name: 'connections', points: over('app_connections') }], count),
    ),
    tile(
      'Agents',
      plural(now.agents_online, 'agent') + ' online',
      plural(now.agent_connections, 'connection'),
      chartOf('Agent connections', [{ name: 'connections', points: over('agent_connections') }], count),
    ),
    tile(
      'Events in flight',
      String(now.events_in_flight),
      'accepted, waiting for their reply or error',
      chartOf('Events in flight', [{ name: 'in flight', points: over('events_in_flight') }], count),
    ),
    tile(
      'Accepted events',
      rate(last && perSecond(last.accepted)),
      interval,
      chartOf('Accepted events per second', [{ name: 'accepted', points: over('accepted', perSecond) }], rate),
    ),
    tile(
      'Rejected events',
      rate(last && perSecond(last.rejected)),
      interval,
      chartOf('Rejected events per second', [{ name: 'rejected', points: over('rejected', perSecond) }], rate),
    ),
    tile(
      'Fragments',
      rate(last && perSecond(last.fragments)),
      `token fragments forwarded to apps ${interval}`,
      chartOf('Fragments per second', [{ name: 'fragments', points: over('fragments', perSecond) }], rate),
    ),
    tile(
      'Errors',
      plural(
        recentErrors.reduce((n, [, v]) => n + v, 0),
        'error',
      ),
      `in the last ${ERRORS_MINUTES} minutes`,
      chartOf(
        'Errors per second',
        [{ name: 'errors', points: samples.map((s) => ({ at: s.at, value: perSecond(errorCount(s)) })) }],
        rate,
      ),
      table(
        `Error codes in the last ${ERRORS_MINUTES} minutes`,
        ['Code', 'Events'],
        recentErrors,
        'No error in these minutes.',
      ),
    ),
    tile(
      'Latency',
      timed ? `p50 ${duration(last.latency_p50_ms)} · p99 ${duration(last.latency_p99_ms)}` : '—',
      !timed
        ? `no event was replied ${interval}`
        : nodes > 1
          ? `replied ${interval}; across nodes p50 is their mean weighted by replies, p99 the largest of theirs`
          : `of the events replied ${interval}`,
      chartOf(
        'Latency',
        [
          { name: 'p50', points: over('latency_p50_ms') },
          { name: 'p99', points: over('latency_p99_ms') },
        ],
        duration,
      ),
    ),
  );
  replace(nodesBox, nodes > 1 ? nodesTable(history, perSecond) : null);
}

function tile(title, value, detail, ...content) {
  const id = `tile-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return h(
    'section',
    { class: 'tile', 'aria-labelledby': id },
    h('h2', { id }, title),
    h('p', { class: 'value' }, value),
    h('p', { class: 'detail' }, detail),
    content,
  );
}

function nodesTable(history, perSecond) {
  return h(
    'section',
    { 'aria-labelledby': 'nodes-title' },
    h('h2', { id: 'nodes-title' }, 'Nodes'),
    table(
      'Each node now, and its newest sample',
      [
        'Node',
        'Apps online',
        'App connections',
        'Agents online',
        'Agent connections',
        'In flight',
        'Accepted/s',
        'Rejected/s',
        'Fragments/s',
        'p50',
        'p99',
      ],
      history.latest.nodes.map(({ node_id, now }) => {
        const last = history.byNode.get(node_id)?.at(-1);
        const rate = (k) => (last ? decimal(perSecond(last[k])) : '—');
        return [
          h('code', {}, node_id),
          now.apps_online,
          now.app_connections,
          now.agents_online,
          now.agent_connections,
          now.events_in_flight,
          rate('accepted'),
          rate('rejected'),
          rate('fragments'),
          duration(last?.latency_p50_ms),
          duration(last?.latency_p99_ms),
        ];
      }),
      'No node answered.',
    ),
  );
}
