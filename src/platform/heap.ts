import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * The young generation's size (MB of V8's new space) `sizeHeap` holds it at: V8 otherwise
 * doubles it while objects survive its collections, up to a limit it takes from the machine's
 * memory (64 MB a semi-space on a 24 GB machine), and a node under load held 100 MB of it for a
 * request's short-lived objects; below it, a scavenge every few hundred kilobytes allocated costs
 * a loaded node a third of its reads (docs/decisions/0013-young-generation.md).
 */
const youngGenerationMb = 32;

let holding: PerformanceObserver | undefined;

/**
 * Sizes this process's V8 heaps, at run time (no launch flags; docs/decisions/0013-young-generation.md
 * and 0015-old-generation-growth.md):
 * - the young generation grows to `youngGenerationMb` and no further, and grows back to it when
 *   V8 shrinks it (as it does once a node has been idle): after each collection, V8's growth
 *   factor (read each time it would grow the young generation) is set to reach that size;
 * - `growingPercent` (HEAP_GROWING_PERCENT, 50 by default), when above 0: how far the old
 *   generation grows past what its last collection kept before it collects again (0: as V8
 *   decides, up to several times what is live).
 */
export function sizeHeap(growingPercent: number): void {
  if (growingPercent > 0) setFlagsFromString(`--heap-growing-percent=${growingPercent}`);
  if (holding) return;
  let factor = 0;
  const hold = () => {
    const size = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_size / 2 ** 20;
    const wanted = Math.max(1, Math.floor(youngGenerationMb / size));
    if (wanted !== factor) setFlagsFromString(`--semi-space-growth-factor=${wanted}`);
    factor = wanted;
  };
  hold();
  holding = new PerformanceObserver(hold);
  holding.observe({ type: 'gc' });
}
