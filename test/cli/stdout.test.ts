import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl, testRedisUrl } from '../helpers/harness.js';

const bin = join(import.meta.dirname, '../../bin/anchorage');

let dataDir: string;
let env: NodeJS.ProcessEnv;
let dropSchema: (() => Promise<void>) | undefined;

/** The built bin/anchorage as a script runs it; LOG_LEVEL stays at its default, so warnings are written. */
function cli(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env: { ...env, ...extra } }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A port nothing listens on: taken, then given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Ten `key create` runs (two rounds of five at once): stdout is `id: N` and the key on the last line, nothing else. */
async function tenKeys(redisUrl: string): Promise<string[]> {
  const stderr: string[] = [];
  for (let round = 0; round < 2; round++) {
    const results = await Promise.all(Array.from({ length: 5 }, () => cli(['key', 'create', '--email', 'stdout@cli.test'], { REDIS_URL: redisUrl })));
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^id: \d+\nak_[0-9A-Za-z]{40}\n$/);
      stderr.push(result.stderr);
    }
  }
  return stderr;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'anchorage-cli-stdout-'));
  env = { ...process.env, DATA_DIR: dataDir, NODE_ENV: 'test', MAX_API_KEYS: '100' };
  delete env.LOG_LEVEL;
  if (testDatabaseUrl) {
    const schema = `clio_${randomBytes(5).toString('hex')}`;
    const admin = async (query: string) => {
      const client = new pg.Client({ connectionString: testDatabaseUrl });
      await client.connect();
      await client.query(query);
      await client.end();
    };
    await admin(`create schema ${schema}`);
    const url = new URL(testDatabaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    env.DATABASE_URL = url.toString();
    dropSchema = () => admin(`drop schema ${schema} cascade`);
  }
  const created = await cli(['user', 'create', '--email', 'stdout@cli.test', '--password', 'long enough password']);
  expect(created.code, created.stderr).toBe(0);
});

afterAll(async () => {
  await dropSchema?.();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('anchorage CLI output with REDIS_URL', () => {
  it.skipIf(!testRedisUrl)('Redis up: the key is the last line every time, and nothing is logged', { timeout: 120_000 }, async () => {
    const stderr = await tenKeys(testRedisUrl!);
    expect(stderr.filter((text) => text.includes('redis'))).toEqual([]);
  });

  it('Redis unreachable: the key is still the last line; the warning goes to stderr', { timeout: 120_000 }, async () => {
    const stderr = await tenKeys(`redis://127.0.0.1:${await closedPort()}`);
    expect(stderr.every((text) => text.includes('redis unavailable; limits fall back to memory'))).toBe(true);
  });

  it('user create and housekeeping print their JSON alone on stdout, Redis unreachable', { timeout: 60_000 }, async () => {
    const redis = { REDIS_URL: `redis://127.0.0.1:${await closedPort()}` };
    const user = await cli(['user', 'create', '--email', 'json@cli.test', '--password', 'long enough password'], redis);
    expect(user.code, user.stderr).toBe(0);
    expect(JSON.parse(user.stdout)).toEqual({ user_id: expect.any(Number), account_id: expect.any(Number) });
    const housekeeping = await cli(['housekeeping'], redis);
    expect(housekeeping.code, housekeeping.stderr).toBe(0);
    expect(JSON.parse(housekeeping.stdout)).toEqual({ sessions: 0, idempotency_keys: 0, oauth_codes: 0, oauth_tokens: 0, activity_log: 0 });
  });
});
