/**
 * Just enough PromQL reading to check that what a rule or a panel queries is served: the metric
 * selectors of an expression (names and label matchers) and the labels it groups by. Not a
 * parser: it walks tokens, skipping functions, range brackets, numbers and keywords.
 */

export interface Matcher {
  name: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

export interface Selector {
  metric: string;
  matchers: Matcher[];
}

export interface QueryParts {
  selectors: Selector[];
  /** Labels of `by (…)`, `on (…)`, `group_left (…)`… */
  grouping: string[];
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2']);
const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
]);
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const IDENT = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

/** Reads `{a="x", b=~"y"}` from `expr[at]` (the `{`); returns the matchers and the index after `}`. */
function readMatchers(expr: string, at: number): [Matcher[], number] {
  const end = expr.indexOf('}', at);
  if (end < 0) throw new Error(`unclosed { in ${expr}`);
  const body = expr.slice(at + 1, end);
  const matchers: Matcher[] = [];
  const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?/gy;
  let read = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(body)) !== null) {
    matchers.push({ name: m[1]!, op: m[2] as Matcher['op'], value: m[3]!.replace(/\\(.)/g, '$1') });
    read = re.lastIndex;
  }
  if (body.slice(read).trim() !== '') throw new Error(`cannot read the matchers {${body}} in ${expr}`);
  return [matchers, end + 1];
}

export function queryParts(expr: string): QueryParts {
  const selectors: Selector[] = [];
  const grouping: string[] = [];
  let i = 0;
  const skipSpace = (): void => {
    while (i < expr.length && /\s/.test(expr[i]!)) i++;
  };
  while (i < expr.length) {
    const c = expr[i]!;
    const rest = expr.slice(i);
    if (/[0-9.]/.test(c)) {
      i += /^[0-9.][0-9a-zA-Z_.]*/.exec(rest)![0].length; // a number or a duration (1h, 0.95, 1e3)
    } else if (c === '"' || c === "'") {
      i = expr.indexOf(c, i + 1) + 1; // a string argument (label_replace…)
    } else if (c === '[') {
      i = expr.indexOf(']', i) + 1; // a range or subquery: durations, $__rate_interval
    } else if (c === '{') {
      throw new Error(`a selector without a metric name in ${expr}`);
    } else if (IDENT.test(rest)) {
      const word = IDENT.exec(rest)![0];
      i += word.length;
      skipSpace();
      if (GROUPING.has(word) && expr[i] === '(') {
        const end = expr.indexOf(')', i);
        grouping.push(
          ...expr
            .slice(i + 1, end)
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        );
        i = end + 1;
      } else if (expr[i] === '(' || KEYWORDS.has(word) || AGGREGATIONS.has(word)) {
        // a function or an aggregation: its arguments are read as the walk goes on
      } else {
        let matchers: Matcher[] = [];
        if (expr[i] === '{') [matchers, i] = readMatchers(expr, i);
        selectors.push({ metric: word, matchers });
      }
    } else {
      i++;
    }
  }
  return { selectors, grouping };
}

/** Series of a Prometheus text exposition: metric name -> label sets. */
export function servedSeries(text: string): Map<string, Record<string, string>[]> {
  const series = new Map<string, Record<string, string>[]>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!;
    const list = series.get(m[1]!) ?? [];
    list.push(labels);
    series.set(m[1]!, list);
  }
  return series;
}

export function matches(labels: Record<string, string>, m: Matcher): boolean {
  const v = labels[m.name] ?? '';
  switch (m.op) {
    case '=':
      return v === m.value;
    case '!=':
      return v !== m.value;
    case '=~':
      return new RegExp(`^(?:${m.value})$`).test(v);
    case '!~':
      return !new RegExp(`^(?:${m.value})$`).test(v);
    default: {
      const never: never = m.op;
      throw new Error(`unknown matcher ${String(never)}`);
    }
  }
}
