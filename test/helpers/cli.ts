import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isolatedPostgresUrl, testDatabaseUrl } from './harness.js';

/** The built operator command and server, as outside scripts and process managers start them. */
export const bin = join(import.meta.dirname, '../../bin/anchorage');
export const distDir = join(import.meta.dirname, '../../dist');
export const main = join(distDir, 'main.js');

/** Each run starts a Node process: seconds on a busy machine, so only a hung one is stopped. */
export const cliTimeoutMs = 120_000;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed. */
  input?: string;
  timeout?: number;
}

/** The built bin/anchorage with `args`: its exit code, stdout and stderr. */
export function runCli(args: string[], { env, input, timeout = cliTimeoutMs }: CliRunOptions): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, ...args], { env, timeout, maxBuffer: 1 << 26 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

export interface CliSandbox {
  dataDir: string;
  /** The environment for the CLI and server: DATA_DIR, silent logs, and DATABASE_URL under TEST_DATABASE_URL. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** A data directory of its own and, under TEST_DATABASE_URL, a PostgreSQL schema of its own. */
export async function cliSandbox(dirPrefix: string, extra: NodeJS.ProcessEnv = {}): Promise<CliSandbox> {
  const dataDir = mkdtempSync(join(tmpdir(), dirPrefix));
  const postgres = testDatabaseUrl ? await isolatedPostgresUrl(testDatabaseUrl) : undefined;
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', NODE_ENV: 'test', ...extra };
  if (postgres) env.DATABASE_URL = postgres.url;
  return {
    dataDir,
    env,
    async close() {
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The built server (dist/main.js) in a process of its own. */
export function startServer(env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [main], { env });
}

/** SIGTERM, then the exit code once the server has finished. */
export function stopServer(server: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
  server.kill('SIGTERM');
  return exited;
}
