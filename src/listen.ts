/**
 * Listening on a TCP port, for every server of the package (the dashboard, the metrics endpoint,
 * the emulator): a port that cannot be had fails with one line naming the address and what to do,
 * never Node's bare `listen EADDRINUSE` or a crash reading a null address. A leaf module (Node
 * only), so the emulator may use it too; each caller wraps the line in its own error class.
 */
import type { AddressInfo, Server } from 'node:net';

export interface ListenAt {
  /** TCP port; 0 picks a free one. */
  port: number;
  host: string;
  /** Where a person chooses the port, for the message: `--port or dashboard.port`. */
  setting?: string;
}

/** Listens on `at` and resolves with the bound address; rejects with `fail(line, cause)`. */
export async function listenOn(
  server: Server,
  at: ListenAt,
  fail: (message: string, cause: Error) => Error,
): Promise<AddressInfo> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(at.port, at.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err: unknown) {
    const cause = err instanceof Error ? err : new Error(String(err));
    throw fail(listenFailure(cause, at), cause);
  }
  return server.address() as AddressInfo;
}

/** Why `at` could not be listened on, and what to do, in one line. */
export function listenFailure(err: NodeJS.ErrnoException, at: ListenAt): string {
  const choose = `choose another port${at.setting ? ` (${at.setting})` : ''}; 0 picks a free one`;
  switch (err.code ?? '') {
    case 'EADDRINUSE':
      return `port ${at.port} on ${at.host} is already in use by another process: stop it, or ${choose}`;
    case 'EACCES':
      return `port ${at.port} on ${at.host} needs privileges this process lacks (ports below 1024 do): ${choose}`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return `cannot listen on ${at.host}: it is not an address of this machine; use one it has (127.0.0.1, or 0.0.0.0 for all)`;
    default:
      return `cannot listen on ${at.host}:${at.port}: ${err.code ?? err.message}`;
  }
}
