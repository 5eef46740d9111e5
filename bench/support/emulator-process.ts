/** `filings-export emulator` in a child process, for benches that keep its CPU out of their own process. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface EmulatorProcess {
  /** Base URL the emulator printed (`listening on URL`). */
  url: string;
  /** Its process id (its CPU, for a bench that splits time between it and the exporter). */
  pid: number;
  /** SIGTERM, then SIGKILL if it has not exited after KILL_AFTER_MS; resolves once it has exited. */
  close(): Promise<void>;
}

/** How long close() waits for a graceful exit before SIGKILL. */
const KILL_AFTER_MS = 10_000;

/**
 * Starts `node bin/filings-export.mjs emulator ARGS` (with `env` added to this process's
 * environment); resolves once it prints `listening on URL`, rejects with its output if it exits first.
 */
export async function startEmulatorProcess(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<EmulatorProcess> {
  const bin = fileURLToPath(new URL('../../bin/filings-export.mjs', import.meta.url));
  const child = spawn(process.execPath, [bin, 'emulator', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(new Error(`emulator exited with ${code ?? signal} before listening: ${out.slice(-500)}`)),
    );
  });
  return {
    url,
    pid: child.pid ?? NaN,
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
