import { statSync } from 'node:fs';
import { Presets, SingleBar } from 'cli-progress';
import type { ImportProgress } from '../services/import.js';

const megabytes = (bytes: number) => (bytes / 1_048_576).toFixed(1);

/**
 * Import progress on stderr while stderr is a terminal; nothing otherwise, so scripts that read
 * the JSON on stdout (and anything on stderr) see only what they did before.
 */
export class ImportProgressBar {
  private readonly bar: SingleBar;
  private bytes = 0;
  private rows: ImportProgress = { sites: 0, articles: 0, backlinks: 0 };

  /** A bar for the file at `path`, read twice (checked, then written), or undefined when stderr is not a terminal. */
  static forInput(path: string): ImportProgressBar | undefined {
    if (!process.stderr.isTTY) return undefined;
    return new ImportProgressBar(2 * statSync(path).size);
  }

  private constructor(size: number | undefined) {
    const rows = '{articles} articles, {backlinks} backlinks, {sites} sites';
    this.bar = new SingleBar(
      {
        stream: process.stderr,
        format: size ? `Checking, then importing [{bar}] {percentage}% | {read} of {size} MB | ${rows} | {duration_formatted}` : `Importing {read} MB | ${rows} | {duration_formatted}`,
        hideCursor: true,
      },
      Presets.shades_classic,
    );
    this.bar.start(size ?? 0, 0, this.payload(size));
  }

  read(bytes: number): void {
    this.bytes += bytes;
    this.bar.update(this.bytes, this.payload());
  }

  wrote(rows: ImportProgress): void {
    this.rows = rows;
    this.bar.update(this.bytes, this.payload());
  }

  stop(): void {
    this.bar.stop();
  }

  private payload(size?: number) {
    return { ...this.rows, read: megabytes(this.bytes), ...(size ? { size: megabytes(size) } : {}) };
  }
}
