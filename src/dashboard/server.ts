/**
 * `filings-export dashboard`: the status page, its JSON, and Bull Board beside it for job-level
 * inspection. Read-only by default. Bound to loopback unless told otherwise, and then only with a
 * token (every route asks for it); actions that change state (retry a snapshot) need the token
 * even on loopback. Bull Board is mounted read-only: its retry/remove buttons would bypass the
 * snapshot record, so state changes go through this server's own actions.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ConfigError, coerceError } from '../errors.js';
import { listenOn } from '../listen.js';
import type { Secret } from '../config/secret.js';
import type { PipelineContext } from '../pipeline/index.js';
import type { Clock } from '../types.js';
import { DASHBOARD_HTML } from './page.js';
import { dashboardState } from './state.js';

export interface DashboardOptions {
  ctx: PipelineContext;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Listening address. @defaultValue `127.0.0.1` */
  host?: string;
  /** Where a person chooses the port, named when it is taken: `--port or dashboard.port`. */
  portSetting?: string;
  /** Required for any non-loopback host, and for actions everywhere. @defaultValue none */
  token?: Secret;
  clock: Clock;
}

export interface RunningDashboard {
  url: string;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export async function startDashboard(opts: DashboardOptions): Promise<RunningDashboard> {
  const host = opts.host ?? '127.0.0.1';
  const exposed = !LOOPBACK.has(host);
  if (exposed && opts.token === undefined)
    throw new ConfigError(
      `dashboard: listening on ${host} (not loopback) needs a token: set FILINGS_EXPORT_DASHBOARD_TOKEN`,
    );
  const tokenMatches = (req: Request): boolean => {
    if (opts.token === undefined) return false;
    const header = req.get('authorization');
    const given = header?.startsWith('Bearer ') ? header.slice(7) : req.query.token;
    if (typeof given !== 'string') return false;
    const a = Buffer.from(given);
    const b = Buffer.from(opts.token.reveal());
    return a.length === b.length && timingSafeEqual(a, b);
  };
  const needToken = (req: Request, res: Response, next: NextFunction): void => {
    if (tokenMatches(req)) return next();
    res.status(opts.token === undefined ? 403 : 401).json({
      error:
        opts.token === undefined
          ? 'this action changes state: start the dashboard with FILINGS_EXPORT_DASHBOARD_TOKEN set'
          : 'a valid token is required (Authorization: Bearer <token> or ?token=)',
    });
  };

  const app = express();
  app.disable('x-powered-by');
  if (exposed) app.use(needToken);

  const board = new ExpressAdapter();
  board.setBasePath('/queues');
  createBullBoard({
    queues: [
      new BullMQAdapter(opts.ctx.partsQueue, { readOnlyMode: true }),
      new BullMQAdapter(opts.ctx.snapshotsQueue, { readOnlyMode: true }),
    ],
    serverAdapter: board,
  });
  app.use('/queues', board.getRouter() as express.Router);

  app.get('/', (_req, res) => {
    res.type('html').set('cache-control', 'no-store').send(DASHBOARD_HTML);
  });
  app.get('/api/state', (_req, res, next) => {
    dashboardState(opts.ctx, opts.clock.now()).then((s) => res.json(s), next);
  });
  app.post('/api/snapshots/:id/retry', needToken, (req, res, next) => {
    const id = String(req.params.id);
    (async () => {
      // The whole record: a retry re-enqueues the spec with its company list.
      const rec = await opts.ctx.store.get(id);
      if (!rec) return res.status(404).json({ error: `snapshot ${id}: no such snapshot` });
      const outcome = await opts.ctx.enqueue(rec.spec, { retry: true });
      return res.json({ snapshot: id, outcome: outcome.kind });
    })().catch(next);
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    res.status(500).json({ error: coerceError(err).message });
  });

  // Not app.listen: Express 5 hands a listen error to the success callback.
  const server: Server = createServer(app);
  const { port } = await listenOn(
    server,
    { port: opts.port, host, ...(opts.portSetting ? { setting: opts.portSetting } : {}) },
    (message, cause) => new ConfigError(`dashboard: ${message}`, { cause }),
  );
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
