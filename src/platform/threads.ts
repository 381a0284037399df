import { setPriority } from 'node:os';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// Under vitest the service runs from its TypeScript sources: a thread then loads them through
// module hooks that transpile them; the built service runs the .js files of dist/.
const fromSource = import.meta.url.endsWith('.ts');
const sourceHooks = new URL('./ts-source-hooks.mjs', import.meta.url).href;

/** The module a thread runs: `name` (no extension) next to the module `base` (its `import.meta.url`). */
export const threadModule = (base: string, name: string): URL => new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, base);

/** The node options of a thread (and of a test's thread that stands for one). */
export const threadExecArgv = fromSource
  ? ['--import', `data:text/javascript,import{register}from'node:module';register(${JSON.stringify(sourceHooks)})`]
  : [];

/**
 * The nice value of the service's helper threads (the HTML pool's, the off-loop SQLite
 * connection's): above the event loop's (0), so that on a busy node the loop gets the CPU first
 * and a thread parsing a large body, committing it or checkpointing waits instead
 * (docs/decisions/0001-worker-pool-for-large-html.md).
 */
export const helperThreadNice = 10;

/**
 * Lowers the calling thread's priority to `nice` (above the event loop's 0), so that on a busy node
 * the loop gets a core first. Linux keeps a nice value per thread (setpriority of the calling
 * thread); elsewhere it would lower the whole process, so it is left alone there.
 */
export function niceThisThread(nice: number): void {
  if (process.platform === 'linux') setPriority(nice);
}

/**
 * `gc`, for a thread that collects its own heap after its work. Node has no API for a collection
 * in a thread (`--expose-gc` is refused in a worker's `execArgv`): the flag is set at run time and
 * `gc` taken from a new context, as jest's leak detector does. The flag holds for the whole
 * process, so it is cleared again at once (left set, every thread started after it found a global
 * `gc`). Threads starting at the same moment race on it (one clears it between another's setting
 * and taking: 2 of 120 thread starts failed in a test of three at once, and the pool's thread then
 * failed its task), so it is tried again until it holds.
 */
export function exposedGc(): () => void {
  for (;;) {
    setFlagsFromString('--expose-gc');
    try {
      return runInNewContext('gc') as () => void;
    } catch {
      // Another thread cleared the flag in between: set it again.
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
}

/**
 * A thread's collection of its own heap after its work (`exposedGc`), on the thread's next turn:
 * collected inside the work, the work's large texts were still in its variables and stayed until
 * the thread's next task. The returned function asks for it, once per turn however often it is called; the
 * collection then runs when the heap holds more than `above` bytes (garbage included), or when a
 * caller let go of shared memory since the last one (`letGoOfShared`: a large body's bytes stay in
 * the thread's reach until its heap is collected, which its few allocations would not ask for).
 * `before` runs first, whether it collects or not.
 */
export function collectionOnNextTurn(above: number, before: () => void = () => {}): (letGoOfShared?: boolean) => void {
  const gc = exposedGc();
  let letGo = false;
  let due = false;
  const collect = () => {
    due = false;
    before();
    if (!letGo && getHeapStatistics().used_heap_size <= above) return;
    letGo = false;
    gc();
  };
  return (letGoOfShared = false) => {
    letGo ||= letGoOfShared;
    if (due) return;
    due = true;
    setImmediate(collect);
  };
}
