// monitoring/: the Grafana dashboard and the Prometheus alert rules an operator installs (README "Dashboards and
// alerts"). A panel or an alert that reads a metric, or a label value, the bridge does not export shows "No data" or
// never fires, and nobody notices until the day it was needed: each name is checked against a real bridge's
// /metrics. promtool's checks of the rules are scripts/check-monitoring.sh's.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import type { EventEnd } from '../../src/core/observer.js';
import { registerClusterMetrics } from '../../src/ops/cluster-metrics.js';
import { dashboardProblems } from '../../tools/monitoring/dashboard-check.js';
import { alertExpressions, dashboardQueries, readDashboard } from '../../tools/monitoring/files.js';
import { exportedNames, matchedLabelValues, metricNames } from '../../tools/monitoring/promql.js';
import { startTestBridge } from '../helpers/bridge.js';
import { parseMetrics } from '../helpers/metrics.js';

/** Series Prometheus adds to every target it scrapes, which no bridge exports. */
const PROMETHEUS_OWN = new Set(['up']);
/** Metric families of the bridge the dashboard leaves out on purpose, with why. */
const NOT_ON_DASHBOARD: Record<string, string> = {
  bridge_admin_actions_total: "who changed what is the audit trail's (GET /admin/v1/audit, the dashboard's page)",
};

/**
 * The outcomes bridge_events_total counts, which a fresh bridge has no series of yet: those an accepted event ends
 * with (a Record over the type, so a new outcome fails the type check here) and `rejected`. Never `lost`: the store
 * marks that on rows a crash left pending (O9), no live event ends so.
 */
const ENDED: Record<EventEnd['outcome'], true> = {
  replied: true,
  agent_error: true,
  agent_timeout: true,
  agent_offline: true,
  shutdown: true,
  cancelled: true,
};
const COUNTED_OUTCOMES = [...Object.keys(ENDED), 'rejected'];

/** What a node exports: a bridge's /metrics, and the metrics a node among several adds (O14). */
async function exposition(): Promise<string> {
  const bridge = await startTestBridge();
  const single = await (await fetch(new URL('/metrics', bridge.url))).text();
  const cluster = new Registry();
  registerClusterMetrics(cluster, {
    linked: () => true,
    peers: () => 0,
    traffic: () => ({ publishes: 0, messages: 0, dropped: 0 }),
    counters: () => ({
      framesForGoneAgent: 0,
      messagesForGoneNode: 0,
      agentsCutOff: 0,
      unknownMessages: { version: 0, kind: 0, op: 0 },
    }),
    rateLimitFallbacks: () => 0,
  });
  return single + (await cluster.metrics());
}

const queries = () => [...dashboardQueries(readDashboard()), ...alertExpressions()];

describe('monitoring: the dashboard and the alert rules', function () {
  let exported: Set<string>;
  let samples: ReturnType<typeof parseMetrics>;
  before(async function () {
    const text = await exposition();
    exported = exportedNames(text);
    samples = parseMetrics(text);
  });

  it('reads the queries and names it judges (the reader is not blind)', function () {
    const used = new Set(queries().flatMap((q) => metricNames(q.expr)));
    expect([...used]).to.include.members(['bridge_event_latency_seconds_bucket', 'bridge_cluster_linked', 'up']);
    expect(alertExpressions().map((q) => q.where)).to.include('alert BridgeEventLogNotWritten');
    expect(exported).to.include.members(['bridge_event_latency_seconds_count', 'bridge_events_total']);
    expect(
      metricNames('sum by (le) (rate(a_bucket{x=~"$x"}[$__rate_interval])) / on (j) group_left b > 1e3'),
    ).to.deep.equal(['a_bucket', 'b']);
  });

  it('queries only metrics a bridge exports', function () {
    const unknown = queries().flatMap(({ where, expr }) =>
      metricNames(expr)
        .filter((name) => !exported.has(name) && !PROMETHEUS_OWN.has(name))
        .map((name) => `${where}: ${name}`),
    );
    expect(unknown).to.deep.equal([]);
  });

  it('matches only label values a bridge exports', function () {
    const known: { name: string; labels: Record<string, string> }[] = [
      ...samples,
      ...COUNTED_OUTCOMES.map((outcome) => ({ name: 'bridge_events_total', labels: { outcome } })),
    ];
    const matched = queries().flatMap(({ where, expr }) => matchedLabelValues(expr).map((m) => ({ where, ...m })));
    const judged = matched.filter(({ metric, label }) => known.some((s) => s.name === metric && label in s.labels));
    expect(judged.map((m) => `${m.metric}{${m.label}}`)).to.include.members([
      'bridge_events_total{outcome}',
      'bridge_event_log_rows_dropped_total{reason}',
    ]);
    const absent = judged
      .filter(({ metric, label, value }) => !known.some((s) => s.name === metric && s.labels[label] === value))
      .map(({ where, metric, label, value }) => `${where}: ${metric}{${label}="${value}"}`);
    expect(absent).to.deep.equal([]);
  });

  it("shows every metric family of the bridge's on the dashboard, but those left out with a reason", function () {
    const read = new Set(dashboardQueries(readDashboard()).flatMap((q) => metricNames(q.expr)));
    const families = [...exported].filter((name) => name.startsWith('bridge_') && !/_(bucket|sum|count)$/.test(name));
    const missing = families.filter(
      (family) =>
        !NOT_ON_DASHBOARD[family] && ![...read].some((name) => name === family || name.startsWith(`${family}_`)),
    );
    expect(missing).to.deep.equal([]);
    expect(Object.keys(NOT_ON_DASHBOARD).filter((family) => !exported.has(family))).to.deep.equal([]);
  });

  it("is a Grafana dashboard by Grafana's published schemas, its queries on the variables", function () {
    expect(dashboardProblems(readDashboard())).to.deep.equal([]);
  });

  it('finds what is wrong in a dashboard (the schema check is not blind)', function () {
    const broken = readDashboard() as { panels: Record<string, any>[]; refresh: unknown };
    const panel = broken.panels.find((p) => p.type === 'timeseries')!;
    panel.options.legend.displayMode = 'grid';
    panel.targets[0].expr = 'sum(bridge_connections{instance=~"$instance"})';
    broken.panels.push({ type: 'piechart', id: panel.id, title: 'Pie' });
    broken.refresh = 30;
    const problems = dashboardProblems(broken).join('\n');
    expect(problems).to.include('dashboard/refresh: must be string');
    const fixed = dashboardProblems({ ...broken, refresh: '30s' }).join('\n');
    expect(fixed)
      .to.include('options/legend/displayMode: must be equal to one of the allowed values')
      .and.include('bridge_connections without {job=~"$job", instance=~"$instance"}')
      .and.include('type piechart has no schema')
      .and.include('its id is missing or not unique');
  });
});
