import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliSandbox, cliSandbox, runCli } from '../helpers/cli.js';
import { freePort as closedPort, testRedisUrl } from '../helpers/harness.js';

let sandbox: CliSandbox;

/** The built bin/anchorage as a script runs it; LOG_LEVEL stays at its default, so warnings are written. */
const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) => runCli(args, { env: { ...sandbox.env, ...extra } });

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
  sandbox = await cliSandbox('anchorage-cli-stdout-', { MAX_API_KEYS: '100' });
  delete sandbox.env.LOG_LEVEL;
  const created = await cli(['user', 'create', '--email', 'stdout@cli.test', '--password', 'long enough password']);
  expect(created.code, created.stderr).toBe(0);
});

afterAll(async () => {
  await sandbox?.close();
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
    expect(JSON.parse(housekeeping.stdout)).toEqual({ sessions: 0, idempotency_keys: 0, oauth_codes: 0, oauth_tokens: 0, activity_log: 0, import_uploads: 0 });
  });
});
