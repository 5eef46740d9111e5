/** What /proc says of a process (Linux): the benches' CPU and memory readings, stated once. */
import { readFile } from 'node:fs/promises';

/** User + system CPU seconds of a process so far (/proc/PID/stat, clock ticks of 1/100 s). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** A line of /proc/PID/status in MB (VmRSS: now, VmHWM: peak), NaN when absent (a zombie). */
async function statusMb(pid: number, key: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(status);
  return m?.[1] ? Number(m[1]) / 1024 : NaN;
}

/** Resident set size of a process now (Linux VmRSS), in MB. */
export const rssMb = (pid: number): Promise<number> => statusMb(pid, 'VmRSS');

/** Peak resident set size of a process (Linux VmHWM), in MB. */
export const peakRssMb = (pid: number): Promise<number> => statusMb(pid, 'VmHWM');
