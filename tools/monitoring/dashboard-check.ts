// The dashboard judged against Grafana's own published JSON schemas (monitoring/grafana/schema/, vendored from
// grafana-foundation-sdk): the dashboard model, each query against the Prometheus data source's, each panel's
// options against its plugin's. Then what our dashboard promises beyond the schema: every query reads the data
// source variable and the job and node variables, so one dashboard serves one node or a fleet.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { MONITORING_DIR, panelsOf, type Json } from './files.js';
import { metricNames } from './promql.js';

const require = createRequire(import.meta.url);
const { Ajv } = require('ajv') as typeof import('ajv');
const addFormats = require('ajv-formats') as (ajv: InstanceType<typeof Ajv>) => unknown;
type Validate = ReturnType<InstanceType<typeof Ajv>['compile']>;

const SCHEMA_DIR = resolve(MONITORING_DIR, 'grafana/schema');
/** The panel plugins whose schemas are vendored; a panel of another type is refused rather than left unjudged. */
const PANEL_TYPES = ['timeseries', 'stat'] as const;
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };
/** What every query selects, so that the variables choose the series. */
const SELECTOR = 'job=~"$job", instance=~"$instance"';

function schemaOf(name: string): object {
  return JSON.parse(readFileSync(resolve(SCHEMA_DIR, `${name}.jsonschema.json`), 'utf8')) as object;
}

/** A panel plugin's options, and its field config's `custom` part (undefined: the plugin has none, e.g. stat). */
type PluginSchemas = { options: Validate; custom: Validate | undefined };
let compiled: { dashboard: Validate; query: Validate; panels: Record<string, PluginSchemas> };

function validators(): typeof compiled {
  if (compiled) return compiled;
  const ajv = new Ajv({ strict: true, allErrors: true });
  addFormats(ajv);
  ajv.addKeyword('x-deprecation-message'); // an annotation of the generated schemas, nothing to check
  for (const name of ['dashboard', 'prometheus', ...PANEL_TYPES]) ajv.addSchema(schemaOf(name), name);
  const get = (ref: string) => ajv.getSchema(ref) ?? fail(`no schema ${ref}`);
  compiled = {
    dashboard: get('dashboard'),
    query: get('prometheus'),
    panels: Object.fromEntries(
      PANEL_TYPES.map((type) => [
        type,
        { options: get(`${type}#/definitions/Options`), custom: ajv.getSchema(`${type}#/definitions/FieldConfig`) },
      ]),
    ),
  };
  return compiled;
}

function fail(message: string): never {
  throw new Error(message);
}

function errorsOf(where: string, validate: Validate, value: unknown): string[] {
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => {
    const { additionalProperty, allowedValues } = e.params as { additionalProperty?: string; allowedValues?: unknown };
    const detail = additionalProperty ?? (allowedValues ? JSON.stringify(allowedValues) : undefined);
    return `${where}${e.instancePath}: ${e.message ?? 'invalid'}${detail ? ` (${detail})` : ''}`;
  });
}

interface CheckedPanel {
  type?: string;
  id?: number;
  title?: string;
  datasource?: unknown;
  options?: unknown;
  fieldConfig?: { defaults?: { custom?: unknown } };
  targets?: { expr?: unknown; datasource?: unknown }[];
}

/** Everything wrong with the dashboard, one line each; empty when it is right. */
export function dashboardProblems(dashboard: Json): string[] {
  const { dashboard: validateDashboard, query, panels } = validators();
  const problems = errorsOf('dashboard', validateDashboard, dashboard);
  if (problems.length > 0) return problems; // the rest reads what the schema guarantees
  const ids = new Set<number>();
  for (const panel of panelsOf(dashboard) as CheckedPanel[]) {
    const where = `panel ${panel.id} "${panel.title}"`;
    if (panel.id === undefined || ids.has(panel.id)) problems.push(`${where}: its id is missing or not unique`);
    ids.add(panel.id ?? -1);
    if (panel.type === 'row') continue;
    const plugin = panels[panel.type ?? ''];
    if (!plugin) {
      problems.push(`${where}: type ${panel.type} has no schema in monitoring/grafana/schema/ (${PANEL_TYPES})`);
      continue;
    }
    problems.push(...errorsOf(`${where} options`, plugin.options, panel.options ?? {}));
    const custom = panel.fieldConfig?.defaults?.custom;
    if (plugin.custom) problems.push(...errorsOf(`${where} fieldConfig.defaults.custom`, plugin.custom, custom ?? {}));
    else if (custom !== undefined) problems.push(`${where}: fieldConfig.defaults.custom, which ${panel.type} has not`);
    if (!sameJson(panel.datasource, DATASOURCE)) problems.push(`${where}: its data source is not \${datasource}`);
    if (!panel.targets?.length) problems.push(`${where}: no query`);
    for (const [i, target] of (panel.targets ?? []).entries()) {
      problems.push(...errorsOf(`${where} target ${i}`, query, target));
      if (!sameJson(target.datasource, DATASOURCE))
        problems.push(`${where} target ${i}: its data source is not \${datasource}`);
      if (typeof target.expr === 'string')
        for (const name of unselected(target.expr))
          problems.push(`${where} target ${i}: ${name} without {${SELECTOR}}`);
    }
  }
  return problems;
}

/** The metrics an expression reads somewhere without the variables' selector (its first matchers). */
function unselected(expr: string): string[] {
  return metricNames(expr).filter((name) =>
    [...expr.matchAll(new RegExp(`(?<![\\w:])${name}(?![\\w:])`, 'g'))].some(
      (m) => !expr.startsWith(`{${SELECTOR}`, m.index + name.length),
    ),
  );
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
