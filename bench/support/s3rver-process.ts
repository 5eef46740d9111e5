import { spawn } from 'node:child_process';

/**
 * s3rver with one bucket `bench`, in a child process so its CPU does not count against the bench's
 * own process; resolves with its endpoint once it listens.
 */
export async function startS3rverProcess(dir: string): Promise<{ endpoint: string; stop(): void }> {
  const script = `const S3rver = require('s3rver');
new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: ${JSON.stringify(dir)},
  configureBuckets: [{ name: 'bench' }] }).run().then((a) => console.log('PORT ' + a.port));`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /PORT (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
  });
  return { endpoint: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}
