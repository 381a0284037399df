import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The service keeps the event loop's young generation small (4 MB semi-spaces, where V8 grew it to
// 32 MB under load): `npm start` and bin/anchorage give node the same flags, and the bench reads
// them from `npm start`.
const root = join(import.meta.dirname, '../..');
const startFlags = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.match(
  /node ((?:--\S+ )*)dist\/main\.js/,
)?.[1];
const shebangFlags = readFileSync(join(root, 'bin/anchorage'), 'utf8').split('\n')[0]!.match(/^#!\/usr\/bin\/env -S node ((?:--\S+ ?)*)$/)?.[1];

describe('node flags of the service', () => {
  it('are the same for npm start and bin/anchorage, and keep the young generation small', () => {
    expect(startFlags?.trim()).toBe('--max-semi-space-size=4');
    expect(shebangFlags?.trim()).toBe(startFlags?.trim());
  });
});
