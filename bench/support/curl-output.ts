/** curl's `-w` line in the pipeline bench, read strictly: a figure counts only for a whole download. */

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
