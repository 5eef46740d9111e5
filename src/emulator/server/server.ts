/**
 * The emulator's node:http server: dispatches `/_emulator/*` to the control plane, `/api/b2b/*`
 * to the operation table through the b2b pipeline, and everything else to the raw routes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { toError } from '../errors.js';
import { handleB2b, type B2bPipeline } from './b2b.js';
import { handleControl, type ControlPlane } from './control.js';
import { HttpError } from './http-error.js';
import { sendJson } from './respond.js';
import type { B2bRoute, RawRoute } from './routes/route-context.js';

export interface ServerParts extends B2bPipeline, ControlPlane {
  operations: readonly B2bRoute[];
  rawRoutes: readonly RawRoute[];
  /** Aborted on close: in-flight streams and sleeps stop. */
  shutdown: AbortSignal;
}

const B2B_PREFIX = '/api/b2b/';

export function createEmulatorServer(parts: ServerParts): Server {
  const ops = new Map(parts.operations.map((op) => [op.id, op]));
  const server = createServer((req, res) => {
    void dispatch(parts, ops, req, res);
  });
  return server;
}

async function dispatch(
  parts: ServerParts,
  ops: ReadonlyMap<string, B2bRoute>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  res.once('close', abort);
  parts.shutdown.addEventListener('abort', abort, { once: true });
  const signal = controller.signal;
  let path = '/';
  try {
    const url = new URL(req.url ?? '/', 'http://emulator.local');
    path = url.pathname;
    const method = req.method ?? 'GET';
    if (path.startsWith('/_emulator/')) {
      await handleControl(parts, path, req, res);
      return;
    }
    if (path.startsWith(B2B_PREFIX)) {
      const id = path.slice(B2B_PREFIX.length).replace(/\/+$/, '');
      const op = ops.get(id);
      if (!op) throw new HttpError(404, `Unknown operation: ${path}`);
      if (method !== 'POST') {
        req.resume();
        throw new HttpError(
          405,
          `Method ${method} not allowed: ${B2B_PREFIX}* operations are POST with a JSON body`,
          {
            Allow: 'POST',
          },
        );
      }
      await handleB2b(parts, op, req, res, signal);
      return;
    }
    const matching = parts.rawRoutes.filter((r) => r.pattern.test(path));
    const route = matching.find((r) => r.method === method);
    if (!route) {
      req.resume();
      if (matching.length > 0) {
        const allow = [...new Set(matching.map((r) => r.method))].join(', ');
        throw new HttpError(405, `Method ${method} not allowed on ${path}`, { Allow: allow });
      }
      throw new HttpError(404, `Not found: ${path}`);
    }
    const groups = route.pattern.exec(path)?.slice(1) ?? [];
    const params = groups.map((g) => decodeURIComponent(g ?? ''));
    req.resume();
    await route.handle({ req, res, url, params, deps: parts.deps, signal });
  } catch (err: unknown) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err instanceof HttpError) {
      await sendJson(res, err.status, { error: err.message }, err.headers);
      return;
    }
    const e = toError(err);
    parts.deps.logger.error({ err: e, path }, 'emulator: request failed');
    await sendJson(res, 500, { error: `Internal server error: ${e.message}` });
  } finally {
    res.off('close', abort);
    parts.shutdown.removeEventListener('abort', abort);
  }
}
