/**
 * The metrics endpoint of a worker (or `run --local`): `/metrics` in the Prometheus text format,
 * `/healthz` (the process answers) and `/readyz` (its dependencies answer: Redis, injected). Bound
 * to the given host (default loopback); closing it is part of the process's graceful shutdown.
 */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { ConfigError } from '../errors.js';
import { listenOn } from '../listen.js';

export interface MetricsServerOptions {
  registry: Registry;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Listening address. @defaultValue `127.0.0.1` */
  host?: string;
  /** Where a person chooses the port, named when it is taken: `--metrics-port or worker.metrics_port`. */
  portSetting?: string;
  /** Resolves when the process can work (e.g. Redis answers PING); rejects with the reason. */
  readiness?: () => Promise<void>;
}

export interface RunningMetricsServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(opts: MetricsServerOptions): Promise<RunningMetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string): void => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n');
    if (path === '/healthz') return send(200, 'text/plain', 'ok\n');
    if (path === '/readyz') {
      void (opts.readiness ?? (() => Promise.resolve()))().then(
        () => send(200, 'text/plain', 'ready\n'),
        (err: unknown) =>
          send(503, 'text/plain', `not ready: ${err instanceof Error ? err.message : String(err)}\n`),
      );
      return;
    }
    if (path === '/metrics') {
      void opts.registry.metrics().then(
        (text) => send(200, opts.registry.contentType, text),
        (err: unknown) => send(500, 'text/plain', `metrics failed: ${String(err)}\n`),
      );
      return;
    }
    send(404, 'text/plain', 'not found: try /metrics, /healthz or /readyz\n');
  });
  // Scrapes are short: never let a slow client hold the process at shutdown.
  server.keepAliveTimeout = 1000;
  const { port, address } = await listenOn(
    server,
    {
      port: opts.port,
      host: opts.host ?? '127.0.0.1',
      ...(opts.portSetting ? { setting: opts.portSetting } : {}),
    },
    (message, cause) => new ConfigError(`metrics endpoint: ${message}`, { cause }),
  );
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
