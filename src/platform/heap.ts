import { setFlagsFromString } from 'node:v8';

/**
 * Sizes this process's V8 heaps, at run time (no launch flags; docs/decisions/0013-young-generation.md
 * and 0015-old-generation-growth.md):
 * - the young generation keeps the size it has: V8 otherwise doubles it while objects survive its
 *   collections, up to a limit it takes from the machine's memory (64 MB a semi-space on a 24 GB
 *   machine), and a node under load held 100 MB of it for a request's short-lived objects;
 * - `growingPercent` (HEAP_GROWING_PERCENT, 50 by default), when above 0: how far the old
 *   generation grows past what its last collection kept before it collects again (0: as V8
 *   decides, up to several times what is live).
 */
export function sizeHeap(growingPercent: number): void {
  setFlagsFromString('--semi-space-growth-factor=1');
  if (growingPercent > 0) setFlagsFromString(`--heap-growing-percent=${growingPercent}`);
}
