// Small line charts over a time window, as inline SVG built with DOM calls (no library, no style attributes: the
// look is in dashboard.css). Each chart says in text what it shows, for screen readers and for anyone who wants
// the number rather than the line.
import { h } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 240;
const HEIGHT = 60;

function svg(tag, attributes = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, String(value));
  el.append(...children);
  return el;
}

/** The smallest of 1, 2, 2.5 and 5 times a power of ten that is at least `n` (at least 1): a scale a reader can take in. */
function niceCeiling(n) {
  if (!(n > 1)) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((v) => v >= n);
}

/** The path of one series; a gap longer than `gapMs` (a node restarted, nobody sampled) breaks the line. */
function pathOf(points, x, y, gapMs) {
  let d = '';
  let previous;
  for (const p of points) {
    if (p.value === null || p.value === undefined) {
      previous = undefined;
      continue;
    }
    const point = `${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`;
    // A line starts with a zero-length segment, so that a lone sample still shows as a dot (round caps).
    d += previous === undefined || p.at - previous > gapMs ? `M${point}L${point}` : `L${point}`;
    previous = p.at;
  }
  return d;
}

/**
 * A chart of `series` (each `{ name, points: [{ at, value }] }`, value null where there is none) from `from` to
 * `to` (epoch ms), with `format(value)` for its numbers. `summary` is the text alternative.
 */
export function lineChart({ title, series, from, to, gapMs, format, summary }) {
  const values = series.flatMap((s) => s.points.map((p) => p.value)).filter((v) => typeof v === 'number');
  const top = niceCeiling(Math.max(0, ...values));
  const x = (at) => ((at - from) / (to - from)) * WIDTH;
  const y = (value) => HEIGHT - (value / top) * HEIGHT;
  const picture = svg(
    'svg',
    {
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      preserveAspectRatio: 'none',
      class: 'chart',
      role: 'img',
      'aria-label': `${title}: ${summary}`,
    },
    svg('line', { x1: 0, y1: HEIGHT, x2: WIDTH, y2: HEIGHT, class: 'baseline' }),
    svg('line', { x1: 0, y1: 0, x2: WIDTH, y2: 0, class: 'topline' }),
    ...series.map((s, i) => svg('path', { d: pathOf(s.points, x, y, gapMs), class: `series series-${i}` })),
  );
  const minutes = Math.round((to - from) / 60_000);
  return h(
    'div',
    { class: 'chart-box' },
    h('p', { class: 'chart-top', 'aria-hidden': 'true' }, format(top)),
    picture,
    h('p', { class: 'chart-axis', 'aria-hidden': 'true' }, h('span', {}, `${minutes} min ago`), h('span', {}, 'now')),
    series.length > 1
      ? h(
          'p',
          { class: 'legend', 'aria-hidden': 'true' },
          series.map((s, i) => h('span', { class: `key key-${i}` }, s.name)),
        )
      : null,
  );
}
