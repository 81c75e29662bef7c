// Checks the chart's Grafana dashboard (helm/restack/dashboards/restack.json) against Grafana's
// own published types and Prometheus' own PromQL grammar, offline:
//   node validate_dashboard.js NODE_MODULES DASHBOARD.json METRICS.txt
// - Types: the JSON is compiled by TypeScript as a literal of @grafana/schema's Dashboard, its
//   panels as time-series panels (Grafana's TimeSeries Options and FieldConfig), so a misspelt
//   or misplaced key, or a value of the wrong type, fails the way it fails in Grafana's code.
// - Queries: every target's `expr` parses with @prometheus-io/lezer-promql (the parser of
//   Prometheus' own query editor), after Grafana's variables are replaced by sample values.
// - Metrics: every restack_* series a query names is one the worker exports (METRICS.txt: the
//   worker's /metrics text, written by the metrics_test), so a renamed metric cannot leave an
//   empty panel behind.
// - Layout: unique panel ids and refIds, panels inside the 24-column grid, every query on the
//   dashboard's data source variable.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const [modulesArg, dashboardPath, metricsPath] = process.argv.slice(2);
if (!modulesArg || !dashboardPath || !metricsPath) {
  console.error('usage: validate_dashboard.js NODE_MODULES DASHBOARD.json METRICS.txt');
  process.exit(2);
}
const modules = path.resolve(modulesArg);
const ts = require(path.join(modules, 'typescript'));
const { parser } = require(path.join(modules, '@prometheus-io/lezer-promql'));

const problems = [];
const dashboard = JSON.parse(fs.readFileSync(dashboardPath, 'utf8'));

// 1. Grafana's types.
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'restack-dashboard-'));
fs.symlinkSync(modules, path.join(work, 'node_modules'));
const source = `import type { Dashboard, Panel, RowPanel, DataQuery } from '@grafana/schema';
import type { Options, FieldConfig } from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';
// Grafana's Prometheus query model: DataQuery plus these (public/app/plugins/datasource/prometheus).
interface PrometheusQuery extends DataQuery { expr: string; legendFormat?: string; }
type TimeSeriesPanel = Omit<Panel<Options, FieldConfig>, 'targets' | 'options'> & { options: Options; targets: PrometheusQuery[] };
// A saved dashboard holds the string values of Grafana's string enums ("table", not
// LegendDisplayMode.Table): map every enum to the union of its values, keeping the rest.
type Saved<T> = T extends string ? \`\${T}\` : T extends Array<infer U> ? Array<Saved<U>> : T extends object ? { [K in keyof T]: Saved<T[K]> } : T;
type RestackDashboard = Saved<Omit<Dashboard, 'panels'> & { panels: Array<TimeSeriesPanel | RowPanel> }>;
export const dashboard: RestackDashboard = ${JSON.stringify(dashboard, null, 2)};
`;
const file = path.join(work, 'dashboard.ts');
fs.writeFileSync(file, source);
const program = ts.createProgram([file], {
  strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022, skipLibCheck: true, types: [],
});
for (const d of ts.getPreEmitDiagnostics(program)) {
  const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
  const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
  problems.push(`type: ${where ? `dashboard.ts:${where.line + 1}: ` : ''}${text}`);
}
fs.rmSync(work, { recursive: true, force: true });

// 2. and 3. Queries and metrics.
const exported = new Set();
for (const line of fs.readFileSync(metricsPath, 'utf8').split('\n')) {
  const m = /^(restack_[a-z0-9_]+)/.exec(line);
  if (m && !line.startsWith('#')) exported.add(m[1]);
}
if (exported.size === 0) problems.push(`metrics: ${metricsPath} names no restack_* series`);
const sample = (expr) => expr.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m').replace(/\$\{?(\w+)\}?/g, 'x');
for (const variable of (dashboard.templating && dashboard.templating.list) || []) {
  if (variable.type === 'query' && (!variable.datasource || variable.datasource.uid !== '${datasource}'))
    problems.push(`variable ${variable.name}: not on the $datasource variable`);
  if (variable.type === 'query') {
    const tree = parser.parse(sample((variable.query && variable.query.query || '').replace(/^label_values\((.*),\s*\w+\)$/, '$1')));
    tree.iterate({ enter(node) { if (node.type.isError) problems.push(`variable ${variable.name}: PromQL syntax error`); } });
  }
}
const ids = new Set();
let queries = 0;
for (const panel of dashboard.panels || []) {
  if (ids.has(panel.id)) problems.push(`panel ${panel.id}: duplicate id`);
  ids.add(panel.id);
  const g = panel.gridPos || {};
  if (!(g.x >= 0 && g.w > 0 && g.x + g.w <= 24 && g.h > 0 && g.y >= 0)) problems.push(`panel "${panel.title}": gridPos outside the grid`);
  if (panel.type === 'row') continue;
  if (!panel.datasource || panel.datasource.uid !== '${datasource}')
    problems.push(`panel "${panel.title}": not on the $datasource variable`);
  const refIds = new Set();
  if (!panel.targets || panel.targets.length === 0) problems.push(`panel "${panel.title}": no query`);
  for (const target of panel.targets || []) {
    ++queries;
    if (refIds.has(target.refId)) problems.push(`panel "${panel.title}": duplicate refId ${target.refId}`);
    refIds.add(target.refId);
    if (!target.datasource || target.datasource.uid !== '${datasource}')
      problems.push(`panel "${panel.title}" ${target.refId}: not on the $datasource variable`);
    const expr = sample(target.expr || '');
    const tree = parser.parse(expr);
    tree.iterate({
      enter(node) {
        if (node.type.isError) problems.push(`panel "${panel.title}" ${target.refId}: PromQL syntax error at ${node.from} in: ${expr}`);
      },
    });
    for (const [name] of expr.matchAll(/restack_[a-z0-9_]+/g)) {
      if (!exported.has(name)) problems.push(`panel "${panel.title}" ${target.refId}: the worker exports no ${name}`);
    }
  }
}
if (queries === 0) problems.push('no queries at all');
if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`dashboard ok: ${ids.size} panels, ${queries} queries, ${exported.size} exported series`);
