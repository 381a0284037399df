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

describe('HTML_HEAP_MB', () => {
  it('bounds each HTML pool thread to 256 MB of old generation unless set', () => {
    expect(loadSettings({}).htmlPool.heapMb).toBe(256);
    expect(loadSettings({ HTML_HEAP_MB: '128' }).htmlPool.heapMb).toBe(128);
  });

  it.each(['63', '0', 'lots'])('refuses %j (a 5 MB body needs 64 MB to parse), naming the variable', (value) => {
    expect(() => loadSettings({ HTML_HEAP_MB: value })).toThrow(/HTML_HEAP_MB/);
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

describe('DATABASE_POOL_SIZE', () => {
  it('opens at most 6 PostgreSQL connections a node unless set', () => {
    expect(loadSettings({}).databasePoolSize).toBe(6);
    expect(loadSettings({ DATABASE_POOL_SIZE: '20' }).databasePoolSize).toBe(20);
  });

  it.each(['0', '-1', '1001', '2.5', 'lots'])('refuses %j, naming the variable', (value) => {
    expect(() => loadSettings({ DATABASE_POOL_SIZE: value })).toThrow(/DATABASE_POOL_SIZE/);
  });
});

describe('DATABASE_LISTEN_URL', () => {
  it('is unset unless set (change notices then use DATABASE_URL)', () => {
    expect(loadSettings({}).databaseListenUrl).toBeUndefined();
    expect(loadSettings({ DATABASE_LISTEN_URL: 'postgres://db.internal:5432/anchorage' }).databaseListenUrl).toBe('postgres://db.internal:5432/anchorage');
  });

  it.each(['', 'db.internal:5432', 'mysql://db/anchorage'])('refuses %j, naming the variable', (value) => {
    expect(() => loadSettings({ DATABASE_LISTEN_URL: value })).toThrow(/DATABASE_LISTEN_URL/);
  });
});
