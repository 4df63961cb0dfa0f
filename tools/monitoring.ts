// `npx tsx tools/monitoring.ts`: the dashboard of monitoring/grafana/ judged against Grafana's published schemas
// and our rules for its queries (tools/monitoring/dashboard-check.ts). scripts/check-monitoring.sh runs it after
// promtool's checks of the alert rules; test/monitoring/ runs the same checks and the metric names.
import { relative } from 'node:path';
import { dashboardProblems } from './monitoring/dashboard-check.js';
import { DASHBOARD_FILE, dashboardQueries, panelsOf, readDashboard } from './monitoring/files.js';

const dashboard = readDashboard();
const problems = dashboardProblems(dashboard);
const file = relative(process.cwd(), DASHBOARD_FILE);
if (problems.length > 0) {
  console.error(`${file}: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log(
  `${file}: a valid Grafana dashboard (${panelsOf(dashboard).length} panels, ${dashboardQueries(dashboard).length} queries)`,
);
