/**
 * A progress bar on stderr for long work (paging through a list, an import, a bulk send). Only on a
 * terminal and without `--json`: a script's or a pipe's stderr gets no control characters.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  /** Sets the total, once it is known (the first page tells how many pages there are). */
  setTotal(total: number): void;
  increment(by?: number): void;
  update(value: number): void;
  stop(): void;
}

const silent: Progress = { setTotal() {}, increment() {}, update() {}, stop() {} };

/**
 * `counting`: for work whose total is not known beforehand (the lines of a court zip, streamed), a
 * running count and the time so far instead of a bar and a percentage.
 */
export function progressBar(label: string, unit: string, options: { json: boolean; stream?: NodeJS.WriteStream; counting?: boolean }): Progress {
  const stream = options.stream ?? process.stderr;
  if (options.json || !stream.isTTY || process.env.PALANQUE_NO_PROGRESS) return silent;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: options.counting ? `${label} {value} ${unit} | {duration_formatted}` : `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {duration_formatted}`,
      hideCursor: true,
      clearOnComplete: true,
      etaBuffer: 20,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let total = 0;
  const start = () => {
    if (!started) bar.start(total, 0);
    started = true;
  };
  return {
    setTotal(value) {
      total = value;
      if (started) bar.setTotal(value);
      else start();
    },
    increment(by = 1) {
      start();
      bar.increment(by);
    },
    update(value) {
      start();
      bar.update(value);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
