import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The service keeps the event loop's young generation small (4 MB semi-spaces, where V8 grew it to
// 32 MB under load), V8's helper threads to one (four took the CPU from the event loop on a busy
// two-core node), and glibc's malloc from keeping freed large buffers (a fixed mmap threshold):
// `npm start` and bin/anchorage start node the same way, and the bench reads it from `npm start`.
const root = join(import.meta.dirname, '../..');
const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.match(
  /((?:[A-Z_]+=\S+ )*)node ((?:--\S+ )*)dist\/main\.js/,
);
const shebang = readFileSync(join(root, 'bin/anchorage'), 'utf8')
  .split('\n')[0]!
  .match(/^#!\/usr\/bin\/env -S ((?:[A-Z_]+=\S+ )*)node ((?:--\S+ ?)*)$/);

describe('how the service starts node', () => {
  it('is the same for npm start and bin/anchorage: a fixed mmap threshold, a small young generation and one V8 helper thread', () => {
    expect(start?.[1]?.trim()).toBe('MALLOC_MMAP_THRESHOLD_=131072');
    expect(start?.[2]?.trim()).toBe('--max-semi-space-size=4 --v8-pool-size=1');
    expect(shebang?.[1]?.trim()).toBe(start?.[1]?.trim());
    expect(shebang?.[2]?.trim()).toBe(start?.[2]?.trim());
  });
});
