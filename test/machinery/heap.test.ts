import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { distDir } from '../helpers/cli.js';

const built = (module: string) => JSON.stringify(pathToFileURL(join(distDir, module)).href);

/**
 * The young generation's size (MB) in a fresh Node process after it allocated objects that
 * survive a few collections each (as a loaded server's requests do), with the service's runtime
 * opened on a SQLite database in `dataDir` first, or without.
 */
async function youngGeneration(dataDir: string | undefined): Promise<{ before: number; after: number }> {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size / 2 ** 20;
    const dataDir = ${JSON.stringify(dataDir ?? null)};
    let runtime;
    if (dataDir) {
      const { loadSettings } = await import(${built('config.js')});
      const { openRuntime } = await import(${built('runtime.js')});
      runtime = await openRuntime(loadSettings({ DATA_DIR: dataDir, DEMO_DATA: 'off', LOG_LEVEL: 'silent' }), { scheduleHousekeeping: false });
    }
    const before = young();
    let kept = [];
    for (let i = 0; i < 3e6; i++) {
      kept.push({ i, list: [i] });
      if (kept.length > 3e5) kept = kept.slice(1e5);
    }
    const after = young();
    await runtime?.close();
    console.log(JSON.stringify({ before, after }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
  return JSON.parse(stdout) as { before: number; after: number };
}

describe('the heap of a node', () => {
  it('keeps its young generation at the size it has once the runtime is open, where V8 alone grows it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'anchorage-heap-'));
    try {
      const [sized, unsized] = await Promise.all([youngGeneration(dataDir), youngGeneration(undefined)]);
      expect(unsized.after).toBeGreaterThanOrEqual(4 * unsized.before);
      expect(sized.after).toBe(sized.before);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
