/**
 * Config layers: each layer is a list of leaf settings, each remembering where it came from
 * (a file, an environment variable, a flag), so an error can say which one to fix.
 */

/** One leaf setting: a path into the config tree, its value, and a human label of its origin. */
export interface Setting {
  path: readonly string[];
  value: unknown;
  /** For example `/etc/fx/config.yaml`, `environment FILINGS_API_URL`, `flag --out`. */
  source: string;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Turns a parsed file into leaf settings. Arrays and scalars are leaves; empty objects vanish. */
export function flattenObject(
  obj: Record<string, unknown>,
  source: string,
  prefix: string[] = [],
): Setting[] {
  const out: Setting[] = [];
  for (const [key, value] of Object.entries(obj)) {
    const path = [...prefix, key];
    if (isPlainObject(value) && Object.keys(value).length > 0)
      out.push(...flattenObject(value, source, path));
    else if (!(isPlainObject(value) && Object.keys(value).length === 0)) out.push({ path, value, source });
  }
  return out;
}

/** Applies settings in order (later wins) onto a fresh tree. */
export function mergeSettings(settings: readonly Setting[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const s of settings) {
    let node = root;
    for (const key of s.path.slice(0, -1)) {
      const next = node[key];
      if (!isPlainObject(next)) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    const last = s.path[s.path.length - 1];
    if (last !== undefined) node[last] = s.value;
  }
  return root;
}

/** Where the value at `path` came from: the last setting that set it or a tree containing it. */
export function sourceOf(settings: readonly Setting[], path: readonly PropertyKey[]): string | undefined {
  const p = path.map(String);
  for (let i = settings.length - 1; i >= 0; i--) {
    const s = settings[i];
    if (!s) continue;
    const n = Math.min(s.path.length, p.length);
    let same = true;
    for (let j = 0; j < n; j++) if (s.path[j] !== p[j]) same = false;
    if (same) return s.source;
  }
  return undefined;
}

export function valueAt(tree: unknown, path: readonly PropertyKey[]): unknown {
  let node: unknown = tree;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** `config.budget.share`, `config.universe.tickers[2]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = 'config';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  return out;
}
