import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/harness.js';
import { type CliSandbox, cliSandbox, cliTimeoutMs, runCli, startServer, stopServer } from '../helpers/cli.js';

/** `serve` on a fresh production database (no demo data, no users) says how to make the first staff user. */
describe('serve on a fresh production database', () => {
  let sandbox: CliSandbox;

  beforeAll(async () => {
    sandbox = await cliSandbox('anchorage-first-user-', { NODE_ENV: 'production', LOG_LEVEL: 'warn' });
  });

  afterAll(async () => {
    await sandbox?.close();
  });

  async function serveOutput(): Promise<string> {
    const port = await freePort();
    const server = startServer({ ...sandbox.env, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: `http://127.0.0.1:${port}` });
    let output = '';
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    await new Promise<void>((resolve, reject) => {
      server.stdout!.on('data', () => output.includes('Anchorage is serving') && resolve());
      server.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
    });
    expect(await stopServer(server)).toBe(0);
    return output;
  }

  it('logs and prints the user create command until a user exists', async () => {
    const first = await serveOutput();
    expect(first).toContain('anchorage user create --email you@example.com --password "a long password" --staff');
    expect(first).toMatch(/"level":40.*no users yet/);
    const created = await runCli(['user', 'create', '--email', 'boss@first.example', '--password', 'a long password', '--staff'], { env: sandbox.env });
    expect(created.code).toBe(0);
    expect(await serveOutput()).not.toContain('user create');
  }, 3 * cliTimeoutMs);
});
