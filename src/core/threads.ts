import { setFlagsFromString } from 'node:v8';
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
