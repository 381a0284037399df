import { describe, expect, it } from 'vitest';
import { loadSettings } from '../src/config.js';

describe('HEAP_GROWING_PERCENT', () => {
  it('lets heaps grow 50 % past what a collection kept unless set; 0 leaves it to V8', () => {
    expect(loadSettings({}).heapGrowingPercent).toBe(50);
    expect(loadSettings({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(loadSettings({ HEAP_GROWING_PERCENT: '20' }).heapGrowingPercent).toBe(20);
  });

  it.each(['-1', '1001', '12.5', 'lots'])('refuses %j, naming the variable', (value) => {
    expect(() => loadSettings({ HEAP_GROWING_PERCENT: value })).toThrow(/HEAP_GROWING_PERCENT/);
  });
});

describe('REDIS_KEY_PREFIX', () => {
  it('is empty unless set, and takes letters, digits, _ . : -', () => {
    expect(loadSettings({}).redisKeyPrefix).toBe('');
    expect(loadSettings({ REDIS_KEY_PREFIX: 'staging:' }).redisKeyPrefix).toBe('staging:');
  });

  it.each(['a b', 'x'.repeat(101), 'key*'])('refuses %j, naming the variable', (value) => {
    expect(() => loadSettings({ REDIS_KEY_PREFIX: value })).toThrow(/REDIS_KEY_PREFIX/);
  });
});
