#!/usr/bin/env bash
# The monitoring files (monitoring/, README "Dashboards and alerts"), as CI checks them:
#   - the alert rules: `promtool check rules`, then their unit tests (`promtool test rules`);
#   - the dashboard: judged against Grafana's published JSON schemas and our rules for its queries
#     (tools/monitoring.ts), and every query of it parsed by promtool as a recording rule.
# Needs promtool (Debian's `prometheus` package; .ci/run installs it). The metric names the dashboard and the rules
# read are checked against a real bridge by `npx mocha test/monitoring/monitoring.test.ts` (in `npm test`).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v promtool >/dev/null; then
  echo "check-monitoring: promtool not found; install Debian's prometheus package (apt-get install prometheus)" >&2
  exit 1
fi
echo "--- alert rules ($(promtool --version 2>&1 | head -n 1))"
promtool check rules monitoring/prometheus/alerts.yml
promtool test rules monitoring/prometheus/alerts.test.yml

echo "--- dashboard"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npx tsx tools/monitoring.ts --queries-as-rules "$tmp/dashboard-queries.yml"
promtool check rules "$tmp/dashboard-queries.yml"
