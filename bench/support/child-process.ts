import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Runs a bench file again in a fresh process (`node bin/run-ts.mjs FILE FLAG ARG-JSON`), so each
 * phase's time and peak RSS are its own; resolves with the JSON the child printed after `mark`.
 */
export function runBenchChild<T>(o: {
  file: string;
  flag: string;
  mark: string;
  arg: { phase: string };
}): Promise<T> {
  const runTs = fileURLToPath(new URL('../../bin/run-ts.mjs', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [runTs, o.file, o.flag, JSON.stringify(o.arg)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith(o.mark));
      if (code !== 0 || line === undefined)
        reject(new Error(`${o.arg.phase} child exited with ${code}: ${out.slice(-500)}`));
      else resolve(JSON.parse(line.slice(o.mark.length)) as T);
    });
  });
}
