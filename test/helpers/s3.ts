/**
 * A real S3-compatible server for tests: s3rver on a free loopback port over a temp directory,
 * with one bucket, plus a TCP proxy in front of it that can misbehave once (real faults, no mocks).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { openStorage } from '../../src/output/storage/open-storage.js';
import type { Storage } from '../../src/output/storage/storage.js';

export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface TestS3 {
  endpoint: string;
  bucket: string;
  dir: string;
  close(): Promise<void>;
}

export async function startS3(bucket = 'test-bucket'): Promise<TestS3> {
  const dir = await mkdtemp(join(tmpdir(), 'filings-export-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket }],
  });
  const addr = await server.run();
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    bucket,
    dir,
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `dropEvery`: every request whose line it accepts is dropped, on a new or a kept-alive connection. */
export type ProxyFault =
  'none' | 'drop-once' | 'status-500-once' | { dropEvery: (requestLine: string) => boolean };

/**
 * A TCP proxy that forwards to `target` and records each request line. With a fault set, the
 * first request whose line starts with `PUT ` is dropped after its headers (`drop-once`) or
 * answered with a 500 (`status-500-once`); later ones pass. `dropEvery` is a storage that keeps
 * failing: the requests it picks never get an answer.
 */
export interface FaultProxy {
  endpoint: string;
  requests: string[];
  faultsInjected: number;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string, fault: ProxyFault): Promise<FaultProxy> {
  const url = new URL(target);
  const sockets = new Set<Socket>();
  const state = { requests: [] as string[], faultsInjected: 0 };
  const server = createServer((client) => {
    sockets.add(client);
    const upstream = createConnection(Number(url.port), url.hostname);
    sockets.add(upstream);
    /** Drops the connection when `dropEvery` picks this request; true when it did. */
    const dropsEvery = (line: string): boolean => {
      if (typeof fault !== 'object' || !fault.dropEvery(line)) return false;
      state.faultsInjected += 1;
      upstream.destroy();
      client.destroy();
      return true;
    };
    let head = '';
    let decided = false;
    client.on('data', (chunk: Buffer) => {
      if (!decided) {
        head += chunk.toString('latin1');
        const line = head.split('\r\n')[0] ?? '';
        if (head.includes('\r\n')) {
          state.requests.push(line);
          decided = true;
          if (dropsEvery(line)) return;
          if (
            typeof fault === 'string' &&
            fault !== 'none' &&
            state.faultsInjected === 0 &&
            line.startsWith('PUT ')
          ) {
            state.faultsInjected += 1;
            upstream.destroy();
            if (fault === 'drop-once') client.destroy();
            else
              client.end(
                'HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/xml\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
              );
            return;
          }
        }
      } else if (chunk.toString('latin1').match(/^[A-Z]+ \/\S* HTTP\/1\.1\r\n/)) {
        const line = chunk.toString('latin1').split('\r\n')[0] ?? '';
        state.requests.push(line);
        if (dropsEvery(line)) return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    upstream.on('end', () => client.end());
    client.on('end', () => upstream.end());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    get faultsInjected() {
      return state.faultsInjected;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The environment that points the CLI (or the incremental planner) at s3rver: its fixed keys for
 * the AWS default chain, and the `output.s3` settings the pipeline tests use.
 */
export function s3rverEnv(endpoint: string): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    AWS_REGION: 'us-east-1',
    FILINGS_EXPORT_S3_ENDPOINT: endpoint,
    FILINGS_EXPORT_S3_FORCE_PATH_STYLE: 'true',
    FILINGS_EXPORT_S3_CHECKSUMS: 'when_required',
  };
}

/** Storage on an s3rver root, as the pipeline tests open it (path style, checksums only where required). */
export function openTestStorage(endpoint: string, root: string): Storage {
  return openStorage(root, {
    settings: { endpoint, forcePathStyle: true, region: 'us-east-1', checksums: 'when_required' },
    credentials: S3RVER_CREDENTIALS,
  });
}
