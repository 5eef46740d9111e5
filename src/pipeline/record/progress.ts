/**
 * Visible progress of a snapshot while `run --wait` or `demo` follows it: one bar per dataset on a
 * terminal (cli-progress, on stderr: stdout is kept for the final JSON line), a log line every few
 * seconds otherwise (CI, files, pipes).
 */
import cliProgress from 'cli-progress';
import { counted, plural } from '../../counted.js';
import type { Logger } from '../../log.js';
import { totals, type SnapshotView } from './snapshot-states.js';

export interface ProgressReporter {
  update(rec: SnapshotView, waiting?: string | null): void;
  stop(): void;
}

export interface ProgressOptions {
  /** Bars when true, log lines when false. @defaultValue process.stderr.isTTY */
  tty?: boolean;
  logger: Logger;
  /** Minimum time between two log lines in non-TTY mode. @defaultValue 5000 */
  intervalMs?: number;
  stream?: NodeJS.WritableStream;
}

export function createProgressReporter(opts: ProgressOptions): ProgressReporter {
  return (opts.tty ?? process.stderr.isTTY === true) ? barReporter(opts) : logReporter(opts);
}

function barReporter(opts: ProgressOptions): ProgressReporter {
  const multibar = new cliProgress.MultiBar(
    {
      stream: opts.stream ?? process.stderr,
      format: ' {dataset} |{bar}| {value}/{total} {parts} | {rows}{extra}',
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      autopadding: true,
      barsize: 30,
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, cliProgress.SingleBar>();
  let waitLine: cliProgress.SingleBar | undefined;
  return {
    update(rec, waiting) {
      const width = Math.max(...Object.keys(rec.progress).map((d) => d.length));
      for (const [ds, p] of Object.entries(rec.progress)) {
        const finished = p.total - p.pending;
        const extraParts = [
          p.not_found ? `${p.not_found} not found` : '',
          p.bad_request ? `${p.bad_request} bad request` : '',
          p.failed ? `${p.failed} failed` : '',
        ].filter(Boolean);
        const payload = {
          dataset: ds.padEnd(width),
          parts: plural(p.total, 'part'),
          rows: counted(p.rows, 'row', 'rows', p.rows.toLocaleString('en-US')),
          extra: extraParts.length ? ` | ${extraParts.join(', ')}` : '',
        };
        const bar = bars.get(ds);
        if (bar) bar.update(finished, payload);
        else bars.set(ds, multibar.create(p.total, finished, payload));
      }
      if (waiting && !waitLine)
        waitLine = multibar.create(
          0,
          0,
          { dataset: 'waiting'.padEnd(width), rows: '', extra: ` ${waiting}` },
          { format: ' {dataset} {extra}' },
        );
      else if (waitLine) waitLine.update(0, { extra: waiting ? ` ${waiting}` : ' (resumed)' });
    },
    stop() {
      multibar.stop();
    },
  };
}

function logReporter(opts: ProgressOptions): ProgressReporter {
  const interval = opts.intervalMs ?? 5000;
  let last = 0;
  let logged = '';
  let latest = '';
  return {
    update(rec, waiting) {
      const t = totals(rec);
      const perDataset = Object.entries(rec.progress)
        .map(([ds, p]) => `${ds} ${p.total - p.pending}/${p.total}`)
        .join(', ');
      latest =
        `snapshot ${rec.spec.id}: ${t.total - t.pending}/${counted(t.total, 'part')} (${perDataset}), ${counted(t.rows, 'row')}` +
        `${t.failed ? `, ${t.failed} failed` : ''}${t.not_found ? `, ${t.not_found} not found` : ''}` +
        `${waiting ? `; waiting: ${waiting}` : ''}`;
      const now = Date.now();
      if (latest !== logged && now - last >= interval) {
        opts.logger.info(latest);
        last = now;
        logged = latest;
      }
    },
    stop() {
      // The final count, whenever the interval swallowed it.
      if (latest !== '' && latest !== logged) opts.logger.info(latest);
    },
  };
}
