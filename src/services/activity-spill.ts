import { createReadStream } from 'node:fs';
import { appendFile, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { NewActivity } from '../db/schema.js';

const spillSuffix = '.jsonl';
const replayingSuffix = '.replaying';

/**
 * Activity records the database refused for good, kept in append-only JSON-lines files (one
 * record a line) under `dir` until it takes them again (`replay`): every answered call keeps its
 * record through a full disk or a database outage. Each process appends to a file of its own;
 * a replay claims a file by renaming it, so two nodes sharing the folder never store it twice.
 */
export class ActivitySpill {
  /** This process's file: host, process and start, so no two processes share one. */
  private readonly file: string;

  constructor(readonly dir: string) {
    this.file = join(dir, `${hostname()}-${process.pid}-${Date.now()}${spillSuffix}`);
  }

  /** Appends `records` and waits for the disk: once this resolves they survive a crash. */
  async keep(records: readonly NewActivity[]): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const handle = await open(this.file, 'a');
    try {
      await appendFile(handle, records.map((record) => `${JSON.stringify(record)}\n`).join(''));
      await handle.datasync();
    } finally {
      await handle.close();
    }
    return this.file;
  }

  /**
   * Hands every kept record to `store`, `batch` at a time, file by file; a file is deleted once all
   * of its records are stored. A file whose records `store` refuses is put back for a later replay.
   * Resolves with the number of records stored.
   */
  async replay(batch: number, store: (records: NewActivity[]) => Promise<void>): Promise<number> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    let stored = 0;
    for (const name of names.filter((n) => n.endsWith(spillSuffix))) {
      const kept = join(this.dir, name);
      const claimed = `${kept}${replayingSuffix}-${process.pid}`;
      // Another node claimed it first, or it is gone.
      if (!(await rename(kept, claimed).then(() => true, () => false))) continue;
      try {
        stored += await storeLines(claimed, batch, store);
      } catch (error) {
        // The records stored before the failure would be stored twice: keep only the rest.
        await rename(claimed, kept).catch(() => undefined);
        throw error;
      }
      await rm(claimed, { force: true });
    }
    return stored;
  }
}

/**
 * Stores the records of `file` in batches; a failed batch leaves the file holding only what is
 * not stored yet, so a later replay neither loses nor repeats a record.
 */
async function storeLines(file: string, batch: number, store: (records: NewActivity[]) => Promise<void>): Promise<number> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let records: NewActivity[] = [];
  let stored = 0;
  const rest: string[] = [];
  let failure: unknown;
  /** Stores the records read so far, or keeps them for the file if the database refuses. */
  const storeBatch = async () => {
    try {
      await store(records);
      stored += records.length;
    } catch (error) {
      failure = error;
      rest.push(...records.map((record) => JSON.stringify(record)));
    }
    records = [];
  };
  for await (const line of lines) {
    if (line.trim() === '') continue;
    if (failure !== undefined) {
      rest.push(line);
      continue;
    }
    records.push(JSON.parse(line) as NewActivity);
    if (records.length < batch) continue;
    await storeBatch();
  }
  if (failure === undefined && records.length > 0) await storeBatch();
  if (failure !== undefined) {
    const handle = await open(file, 'w');
    try {
      await handle.writeFile(rest.map((line) => `${line}\n`).join(''));
      await handle.datasync();
    } finally {
      await handle.close();
    }
    throw failure;
  }
  return stored;
}
