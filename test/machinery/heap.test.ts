import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distDir } from '../helpers/cli.js';

const built = (module: string) => JSON.stringify(pathToFileURL(join(distDir, module)).href);

/**
 * Runs `work` (a function body that returns what to print) in a fresh Node process, with the
 * service's runtime opened first on a SQLite database with the settings `env` (DATA_DIR among
 * them), or without it; `first` runs before anything is imported. `space(name)` gives the size
 * (MB) of one of the main thread's heap spaces.
 */
async function inProcess<T>(env: Record<string, string> | undefined, work: string, first = ''): Promise<T> {
  const script = `
    import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
    ${first}
    const space = (name) => getHeapSpaceStatistics().find((s) => s.space_name === name).space_size / 2 ** 20;
    const env = ${JSON.stringify(env ?? null)};
    let runtime;
    if (env) {
      const { loadSettings } = await import(${built('config.js')});
      const { openRuntime } = await import(${built('runtime.js')});
      runtime = await openRuntime(loadSettings({ ...env, DEMO_DATA: 'off', LOG_LEVEL: 'silent' }), { scheduleHousekeeping: false });
    }
    const result = await (async () => { ${work} })();
    await runtime?.close();
    console.log(JSON.stringify(result));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { maxBuffer: 2 ** 20 });
  return JSON.parse(stdout) as T;
}

/** Objects that survive a few collections each, as a loaded server's requests make them (`sample` is awaited now and then). */
const churn = (count: number) => `
  let kept = [];
  for (let i = 0; i < ${count}; i++) {
    kept.push({ i, list: [i] });
    if (kept.length > 2e5) kept = kept.slice(1e5);
    if ((i & 0xffff) === 0) await sample();
  }`;

describe('the heap of a node', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'anchorage-heap-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('grows its young generation to 32 MB and no further, also from the smallest size V8 shrinks it to; V8 alone grows it on', async () => {
    const young = `
      const sample = () => new Promise((resolve) => setImmediate(resolve));
      ${churn(3e6)}
      return space('new_space');`;
    // V8's growth stopped before anything loads: the young generation keeps V8's first size, 1 MB, as after V8 shrank it.
    const shrunk = "setFlagsFromString('--semi-space-growth-factor=1');";
    const [sized, held, unsized] = await Promise.all([
      inProcess<number>({ DATA_DIR: dataDir }, young, shrunk),
      inProcess<number>(undefined, young, shrunk),
      inProcess<number>(undefined, young),
    ]);
    expect(held).toBeLessThanOrEqual(2);
    expect(sized).toBe(32);
    // Node 24's V8 grows it to 64 MB here; Node 22's stops at 32 MB of its own.
    expect(unsized).toBeGreaterThanOrEqual(32);
  });

  it('collects its old generation once it grows HEAP_GROWING_PERCENT past what is live; 0 leaves it to V8, which lets it grow further', async () => {
    // A live set of a few hundred thousand objects in the old generation, then garbage that lives long enough to be promoted.
    const old = `
      const live = [];
      for (let i = 0; i < 4e5; i++) live.push({ i, text: 'x'.repeat(20) + i, list: [i, i + 1] });
      let peak = 0;
      const sample = () => { peak = Math.max(peak, space('old_space')); };
      ${churn(1e7)}
      // Returning its length keeps the live set reachable through the churn.
      return { peak, live: live.length };`;
    type Old = { peak: number };
    const tight = await inProcess<Old>({ DATA_DIR: dataDir, HEAP_GROWING_PERCENT: '10' }, old);
    const v8s = await inProcess<Old>({ DATA_DIR: dataDir, HEAP_GROWING_PERCENT: '0' }, old);
    expect(tight.peak).toBeLessThan(0.85 * v8s.peak);
  });
});
