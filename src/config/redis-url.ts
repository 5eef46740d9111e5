/**
 * The forms of `REDIS_URL` / `redis.url`, parsed in one place: a single server
 * (`redis://`, `rediss://`), the seed nodes of a Redis Cluster (`redis+cluster://h:p[,h:p…]`) and a
 * Sentinel group (`redis+sentinel://h:p[,h:p…]/MASTER_NAME`), each with optional `user:password@`
 * and `rediss` for TLS. Also the cluster's hash-tag rule for `redis.prefix`: every key of a queue
 * must share one slot, so BullMQ and our own scripts can touch several keys at once.
 */

export interface RedisNode {
  host: string;
  port: number;
}

/** Where the exporter's Redis is, as the connection factory (src/infra/redis-connection.ts) needs it. */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: RedisNode[]; username?: string; password?: string; tls: boolean }
  | {
      kind: 'sentinel';
      sentinels: RedisNode[];
      masterName: string;
      username?: string;
      password?: string;
      /** The Sentinels' own password (`?sentinel_password=`), when they have `requirepass`. */
      sentinelPassword?: string;
      tls: boolean;
    };

export type RedisTopology = RedisTarget['kind'];

const MULTI_NODE =
  /^(rediss?)\+(cluster|sentinel):\/\/(?:([^@/]*)@)?([^/?#@]+)(?:\/([^/?#]*))?(?:\?([^#]*))?$/;

/** The one query parameter a Sentinel URL takes: the Sentinels' own password. */
const SENTINEL_PASSWORD = 'sentinel_password';
const NODE = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$/;

/** A URL that parses into a target, or the reason it does not (for the config's message). */
export function parseRedisUrl(url: string): RedisTarget | string {
  if (/^rediss?:\/\/[^\s]*$/.test(url) && URL.canParse(url)) return { kind: 'single', url };
  const m = MULTI_NODE.exec(url);
  if (m === null)
    return 'must be a redis://, rediss://, redis+cluster://host:port[,host:port…] or redis+sentinel://host:port[,host:port…]/MASTER_NAME URL';
  const [, scheme, kind, auth, hostList = '', path, query] = m;
  const nodes: RedisNode[] = [];
  for (const part of hostList.split(',')) {
    const n = NODE.exec(part.trim());
    if (n === null) return `names node "${part}", which is not host:port`;
    const port = Number(n[2]);
    if (port < 1 || port > 65535) return `names node "${part}", whose port is not 1-65535`;
    nodes.push({ host: (n[1] ?? '').replace(/^\[|\]$/g, ''), port });
  }
  const creds = credentials(auth);
  const tls = scheme === 'rediss';
  if (kind === 'cluster') {
    if (path !== undefined && path !== '')
      return 'a redis+cluster:// URL takes no path (a cluster has no databases)';
    if (query !== undefined) return 'a redis+cluster:// URL takes no ?query';
    return { kind: 'cluster', nodes, tls, ...creds };
  }
  const masterName = decodeURIComponent(path ?? '');
  if (masterName === '')
    return 'a redis+sentinel:// URL ends with /MASTER_NAME, the name the Sentinels monitor';
  const sentinelAuth = sentinelPassword(query);
  if (typeof sentinelAuth === 'string') return sentinelAuth;
  return { kind: 'sentinel', sentinels: nodes, masterName, tls, ...creds, ...sentinelAuth };
}

/** `?sentinel_password=…` (percent-encoded), or why the query is refused. */
function sentinelPassword(query: string | undefined): { sentinelPassword?: string } | string {
  if (query === undefined) return {};
  const params = new URLSearchParams(query);
  const unknown = [...params.keys()].filter((k) => k !== SENTINEL_PASSWORD);
  if (unknown.length > 0)
    return `has query parameter "${unknown[0]}"; a redis+sentinel:// URL takes only ?${SENTINEL_PASSWORD}=`;
  const pw = params.get(SENTINEL_PASSWORD);
  return pw === null || pw === '' ? {} : { sentinelPassword: pw };
}

function credentials(auth: string | undefined): { username?: string; password?: string } {
  if (auth === undefined || auth === '') return {};
  const colon = auth.indexOf(':');
  const user = decodeURIComponent(colon < 0 ? auth : auth.slice(0, colon));
  const password = colon < 0 ? undefined : decodeURIComponent(auth.slice(colon + 1));
  return { ...(user !== '' ? { username: user } : {}), ...(password !== undefined ? { password } : {}) };
}

/** A Redis URL of any form without its password, for messages. */
export function redactUrl(url: string): string {
  if (MULTI_NODE.test(url))
    return url
      .replace(/^([^:]+:\/\/[^:@/]*):[^@/]*@/, '$1:redacted@')
      .replace(new RegExp(`([?&]${SENTINEL_PASSWORD}=)[^&#]*`), '$1redacted');
  try {
    const u = new URL(url);
    if (u.password) u.password = 'redacted';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}

/**
 * The hash tag Redis Cluster hashes a key by: the text between the first `{` and the next `}`,
 * when it is not empty (the cluster spec's rule); null when the key hashes whole.
 */
export function hashTag(key: string): string | null {
  const open = key.indexOf('{');
  if (open < 0) return null;
  const close = key.indexOf('}', open + 1);
  if (close < 0 || close === open + 1) return null;
  return key.slice(open + 1, close);
}

/** The prefix the exporter uses on `topology`, and a note when it differs from the one given. */
export interface ClusterPrefix {
  prefix: string;
  /** Why the prefix was changed (a log line), or null. */
  note: string | null;
}

/**
 * On a cluster the prefix must carry a hash tag, so every key the exporter writes (`<prefix>:…`)
 * lands in one slot; a prefix without braces is wrapped (`fx` → `{fx}`), one whose braces hold no
 * tag is refused (the message names the setting). Other topologies keep the prefix as given.
 */
export function prefixFor(topology: RedisTopology, prefix: string, given: boolean): ClusterPrefix | string {
  if (topology !== 'cluster' || hashTag(prefix) !== null) return { prefix, note: null };
  if (/[{}]/.test(prefix))
    return `redis.prefix "${prefix}" would spread the queue's keys over several cluster slots: its braces hold no hash tag; use a tag such as "{${prefix.replace(/[{}]/g, '') || 'fx'}}" or a name without braces`;
  const tagged = `{${prefix}}`;
  const note = given
    ? `redis.prefix "${prefix}" has no hash tag: using "${tagged}" so every key of the queue shares one cluster slot`
    : null;
  return { prefix: tagged, note };
}
