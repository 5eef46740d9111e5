/** curl downloads of the benches' baselines, read strictly: a figure counts only for a whole download. */
import { execFile } from 'node:child_process';
import { DEMO_API_KEY } from '../../src/emulator/demo-key.js';

/**
 * Reads curl's `-w` line (time, bytes, status, Content-Length when sent); throws unless the
 * download was whole: status 200, some bytes, as many as Content-Length announced. (A chunked body
 * cut short already fails curl itself, exit 18.)
 */
export function parseCurlOutput(out: string): { seconds: number; bytes: number } {
  const [time = '', size = '', code = '', length = ''] = out.trim().split(' ');
  const seconds = Number(time);
  const bytes = Number(size);
  if (code !== '200') throw new Error(`curl: HTTP status ${code || 'none'}, not 200 (${out.trim()})`);
  if (!/^\d+$/.test(size) || bytes === 0) throw new Error(`curl: no body downloaded (${out.trim()})`);
  if (length !== '' && Number(length) !== bytes)
    throw new Error(`curl: ${bytes} bytes downloaded, Content-Length ${length} (${out.trim()})`);
  if (!Number.isFinite(seconds)) throw new Error(`curl: no time measured (${out.trim()})`);
  return { seconds, bytes };
}

/**
 * curl POSTing `{"ticker": TICKER}` to an `/api/b2b/…` endpoint with the demo key, the body
 * discarded: its seconds and bytes, checked by parseCurlOutput.
 */
export async function curlDownload(
  endpoint: string,
  ticker: string,
): Promise<{ seconds: number; bytes: number }> {
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      'curl',
      [
        '-s',
        '--fail',
        '-o',
        '/dev/null',
        '-w',
        '%{time_total} %{size_download} %{http_code} %header{content-length}',
        '-X',
        'POST',
        endpoint,
        '-H',
        `X-API-Key: ${DEMO_API_KEY}`,
        '-H',
        'Content-Type: application/json',
        '-d',
        JSON.stringify({ ticker }),
      ],
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    ),
  );
  return parseCurlOutput(out);
}
