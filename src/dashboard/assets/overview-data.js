// The overview's numbers, kept between polls and combined across nodes as decision D8 says: counts and gauges
// add up, latency is the replied-weighted mean of the nodes' p50 and the largest of their p99. No DOM here, so
// that a test can check the arithmetic without a browser.

const COUNTS = ['accepted', 'rejected', 'fragments', 'replied'];
const GAUGES = ['app_connections', 'agent_connections', 'events_in_flight'];
const NOW = ['app_connections', 'agent_connections', 'apps_online', 'agents_online', 'events_in_flight'];

/** Every node's samples of the last window, oldest first, grown by each answer of GET /admin/v1/overview. */
export class OverviewHistory {
  constructor() {
    this.byNode = new Map();
    this.latest = undefined;
  }

  /** Takes one answer in: its new samples, its nodes' numbers now; drops what fell out of the window. */
  add(overview) {
    this.latest = overview;
    const from = overview.at - overview.window_ms;
    for (const node of overview.nodes) {
      const held = this.byNode.get(node.node_id) ?? [];
      const newest = held.at(-1)?.at ?? -Infinity;
      held.push(...node.samples.filter((s) => s.at > newest));
      this.byNode.set(
        node.node_id,
        held.filter((s) => s.at > from),
      );
    }
    for (const id of this.byNode.keys())
      if (!overview.nodes.some((n) => n.node_id === id) && !overview.missing_nodes.includes(id)) this.byNode.delete(id);
  }

  /**
   * The `after` of the next request: the oldest of the nodes' newest samples, so that no node's sample is
   * skipped when their clocks tick at different moments (the few repeats are dropped by `add`). A node with no
   * sample yet (just started, or new) gets all of them.
   */
  after() {
    const answered = this.latest?.nodes ?? [];
    const newest = answered.map((node) => this.byNode.get(node.node_id)?.at(-1)?.at);
    if (!newest.length || newest.some((at) => at === undefined)) return undefined;
    return Math.min(...newest);
  }

  /** The nodes' samples added up interval by interval (one interval a node: `combine`). */
  sum() {
    const sampleMs = this.latest?.sample_ms ?? 1;
    const buckets = new Map();
    for (const samples of this.byNode.values()) {
      const mine = new Map();
      for (const s of samples) {
        const key = Math.round(s.at / sampleMs); // pairs the intervals of nodes whose timers tick at other moments by their overlap
        mine.set(key, [...(mine.get(key) ?? []), s]);
      }
      for (const [key, list] of mine) buckets.set(key, [...(buckets.get(key) ?? []), oneNode(list)]);
    }
    return [...buckets.keys()].sort((a, b) => a - b).map((key) => combine(buckets.get(key)));
  }

  /** Every node's numbers now added up; `nodes` of them answered. */
  now() {
    const nodes = this.latest?.nodes ?? [];
    return Object.fromEntries(NOW.map((k) => [k, nodes.reduce((n, node) => n + node.now[k], 0)]));
  }
}

/** One node's samples of one interval (two when its timer ran late): counts add up, gauges are the last. */
function oneNode(samples) {
  const last = samples.at(-1);
  const counted = { ...combine(samples) };
  for (const k of GAUGES) counted[k] = last[k];
  return counted;
}

/** Samples of one interval, of several nodes, as one: D8's sum. */
export function combine(samples) {
  const out = { at: Math.max(...samples.map((s) => s.at)) };
  for (const k of [...GAUGES, ...COUNTS]) out[k] = samples.reduce((n, s) => n + s[k], 0);
  out.errors = {};
  for (const s of samples)
    for (const [code, n] of Object.entries(s.errors)) out.errors[code] = (out.errors[code] ?? 0) + n;
  const timed = samples.filter((s) => s.latency_p50_ms !== null && s.replied > 0);
  const replied = timed.reduce((n, s) => n + s.replied, 0);
  out.latency_p50_ms = replied ? timed.reduce((n, s) => n + s.latency_p50_ms * s.replied, 0) / replied : null;
  const p99 = samples.map((s) => s.latency_p99_ms).filter((v) => v !== null);
  out.latency_p99_ms = p99.length ? Math.max(...p99) : null;
  return out;
}

/** Error codes of the samples since `since` (epoch ms), the most frequent first. */
export function errorsSince(samples, since) {
  const counts = {};
  for (const s of samples)
    if (s.at > since) for (const [code, n] of Object.entries(s.errors)) counts[code] = (counts[code] ?? 0) + n;
  return Object.entries(counts).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
}
