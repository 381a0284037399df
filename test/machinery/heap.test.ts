import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { distDir } from '../helpers/cli.js';

/**
 * The young generation's size (MB) in a fresh Node process after it allocated objects that
 * survive a few collections each (as a loaded server's requests do), with `sizeHeap` or without.
 */
async function youngGeneration(sized: boolean): Promise<{ before: number; after: number }> {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { sizeHeap } from ${JSON.stringify(pathToFileURL(join(distDir, 'platform/heap.js')).href)};
    const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size / 2 ** 20;
    if (${sized}) sizeHeap(0);
    const before = young();
    let kept = [];
    for (let i = 0; i < 3e6; i++) {
      kept.push({ i, list: [i] });
      if (kept.length > 3e5) kept = kept.slice(1e5);
    }
    console.log(JSON.stringify({ before, after: young() }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
  return JSON.parse(stdout) as { before: number; after: number };
}

describe('the heap of a node', () => {
  it('keeps its young generation at the size it has, where V8 alone grows it', async () => {
    const [sized, unsized] = await Promise.all([youngGeneration(true), youngGeneration(false)]);
    expect(unsized.after).toBeGreaterThanOrEqual(4 * unsized.before);
    expect(sized.after).toBeLessThanOrEqual(2 * sized.before);
  });
});
