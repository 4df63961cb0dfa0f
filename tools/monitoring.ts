// `npx tsx tools/monitoring.ts`: the dashboard of monitoring/grafana/ judged against Grafana's published schemas
// and our rules for its queries (tools/monitoring/dashboard-check.ts). `--queries-as-rules FILE` also writes its
// PromQL, Grafana's variables replaced by values, as recording rules for `promtool check rules` to parse: promtool
// parses rule files only. scripts/check-monitoring.sh runs both; test/monitoring/ runs the checks and the names.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { dashboardProblems } from './monitoring/dashboard-check.js';
import { DASHBOARD_FILE, dashboardQueries, panelsOf, readDashboard } from './monitoring/files.js';

/** What Grafana puts in place of its variables, as far as parsing the query goes. */
const withValues = (expr: string) =>
  expr.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m').replace(/\$\{\w+\}|\$\w+/g, '.+');

const { values } = parseArgs({ options: { 'queries-as-rules': { type: 'string' } } });
const dashboard = readDashboard();
const problems = dashboardProblems(dashboard);
const file = relative(process.cwd(), DASHBOARD_FILE);
if (problems.length > 0) {
  console.error(`${file}: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
const queries = dashboardQueries(dashboard);
console.log(`${file}: a valid Grafana dashboard (${panelsOf(dashboard).length} panels, ${queries.length} queries)`);

const out = values['queries-as-rules'];
if (out) {
  const rules = queries.map(({ expr }, i) => ({ record: `dashboard:query_${i + 1}`, expr: withValues(expr) }));
  const where = queries.map(({ where }, i) => `# dashboard:query_${i + 1}: ${where}`).join('\n');
  writeFileSync(out, `${where}\n${stringify({ groups: [{ name: 'dashboard-queries', rules }] })}`);
}
