// The metric names a PromQL expression reads, and the names a /metrics exposition offers, so that a dashboard or
// an alert rule querying a metric the bridge does not export (renamed, removed, misspelt) fails in a test instead
// of showing "No data" or never firing.

/** Words of PromQL that stand where a metric name could: operators and modifiers, not series. */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
]);
const LITERALS = new Set(['inf', 'nan']);

/** The metric names an expression selects (not its functions, labels, keywords or Grafana variables). */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // strings, which may hold braces
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // ranges and subqueries, with their durations and variables
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '') // label lists
    .replace(/\boffset\s+-?\w+/g, '')
    .replace(/\$\{?\w+\}?/g, ''); // Grafana's variables anywhere else
  const names = new Set<string>();
  for (const match of stripped.matchAll(/(?<![\w:.])[a-zA-Z_:][\w:]*/g)) {
    const word = match[0];
    const followedBy = stripped.slice(match.index + word.length).trimStart();
    if (followedBy.startsWith('(') || KEYWORDS.has(word) || LITERALS.has(word.toLowerCase())) continue;
    names.add(word);
  }
  return [...names];
}

/**
 * Every series name a Prometheus text exposition offers: each sample's name, and each declared metric's with the
 * suffixes its type adds (a histogram's `_bucket`, `_sum`, `_count`), so a labelled metric that has no sample yet
 * (a counter before its first event) counts as offered.
 */
export function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const declared = /^# TYPE ([a-zA-Z_:][\w:]*) (\w+)$/.exec(line);
    if (declared) {
      const [, name, type] = declared as unknown as [string, string, string];
      names.add(name);
      const suffixes =
        type === 'histogram' ? ['_bucket', '_sum', '_count'] : type === 'summary' ? ['_sum', '_count'] : [];
      for (const suffix of suffixes) names.add(name + suffix);
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)[{\s]/.exec(line);
    if (sample) names.add(sample[1]!);
  }
  return names;
}

/**
 * The label values an expression's selectors match literally: `m{label="v"}`, and the words of `m{label=~"a|b"}`.
 * Negative matchers and Grafana's variables are not values to look for.
 */
export function matchedLabelValues(expr: string): { metric: string; label: string; value: string }[] {
  const found: { metric: string; label: string; value: string }[] = [];
  for (const [, metric, matchers] of expr.matchAll(/(?<![\w:])([a-zA-Z_:][\w:]*)\{([^}]*)\}/g)) {
    for (const [, label, op, value] of matchers!.matchAll(/(\w+)\s*(=~|=)\s*"((?:[^"\\]|\\.)*)"/g)) {
      if (value!.includes('$')) continue;
      const values = op === '=' ? [value!] : /^\w+(\|\w+)*$/.test(value!) ? value!.split('|') : [];
      for (const v of values) found.push({ metric: metric!, label: label!, value: v });
    }
  }
  return found;
}
