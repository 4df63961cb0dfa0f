// What monitoring/ holds, read as the checks need it: the Grafana dashboard and its PromQL, the alert rules' PromQL.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';

export const MONITORING_DIR = resolve(import.meta.dirname, '../../monitoring');
export const DASHBOARD_FILE = resolve(MONITORING_DIR, 'grafana/bridge.json');
export const ALERTS_FILE = resolve(MONITORING_DIR, 'prometheus/alerts.yml');

/** A dashboard as JSON.parse gives it: the checks judge its shape, so nothing is assumed here. */
export type Json = unknown;

export function readDashboard(file = DASHBOARD_FILE): Json {
  return JSON.parse(readFileSync(file, 'utf8')) as Json;
}

interface Panel {
  type?: string;
  title?: string;
  panels?: Panel[];
  targets?: { expr?: unknown }[];
}

/** Every panel, those inside collapsed rows included (an expanded row's panels follow it at the top level). */
export function panelsOf(dashboard: Json): Panel[] {
  const top = ((dashboard as { panels?: Panel[] }).panels ?? []) as Panel[];
  return top.flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** Each query of the dashboard, named by where it is: the panels' targets and the query variables. */
export function dashboardQueries(dashboard: Json): { where: string; expr: string }[] {
  const queries: { where: string; expr: string }[] = [];
  for (const panel of panelsOf(dashboard)) {
    for (const target of panel.targets ?? [])
      if (typeof target.expr === 'string') queries.push({ where: `panel "${panel.title}"`, expr: target.expr });
  }
  const variables = (dashboard as { templating?: { list?: { name?: string; type?: string; query?: unknown }[] } })
    .templating?.list;
  for (const variable of variables ?? []) {
    // label_values(metric{…}, label): only its metric is PromQL.
    const metric = typeof variable.query === 'string' && /^label_values\((.*),\s*\w+\)$/.exec(variable.query.trim());
    if (variable.type === 'query' && metric) queries.push({ where: `variable $${variable.name}`, expr: metric[1]! });
  }
  return queries;
}

/** Each alerting rule's expression, by alert name. */
export function alertExpressions(file = ALERTS_FILE): { where: string; expr: string }[] {
  const rules = parse(readFileSync(file, 'utf8')) as { groups: { rules: { alert?: string; expr: string }[] }[] };
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));
}
