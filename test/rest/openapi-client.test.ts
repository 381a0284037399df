import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { seedSite, token } from '../helpers/fixtures.js';

/*
 * CI for the served document: Redocly CLI lints it with the recommended rules (no warning
 * allowed), openapi-typescript generates a client from it, and the typed program in
 * test/openapi-client/ compiles against that client with tsc, then runs against the service.
 */
const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');
const bin = (name: string) => join(root, 'node_modules/.bin', name);
const program = join(root, 'test/openapi-client');

/**
 * The program's entry point as this file uses it. It is loaded by path at run time: its types
 * exist only once the client is generated, so the test tsconfig leaves test/openapi-client out.
 */
interface Program {
  retitleFirstArticle(baseUrl: string, key: string, title: string): Promise<{ article: { title: string | null }; revalidated: number; stale: { error: string } }>;
}

const quiet = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1', CI: 'true' };

// The address a deployment serves at, as its document names it (a dev default of localhost is flagged).
const h = useHarness({ listen: true, env: { PUBLIC_URL: 'https://anchorage.test' } });
let dir: string;
let documentFile: string;
let typesFile: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'anchorage-openapi-'));
  documentFile = join(dir, 'openapi.json');
  typesFile = join(dir, 'anchorage-openapi.d.ts');
  const res = await h.app.inject({ url: '/api/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  writeFileSync(documentFile, res.body);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the served OpenAPI document in CI', () => {
  it('passes Redocly’s recommended rules with no error and no warning', { timeout: 60_000 }, async () => {
    const result = await run(bin('redocly'), ['lint', documentFile, '--config', join(root, 'redocly.yaml'), '--format', 'json'], {
      cwd: dir,
      env: quiet,
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    const report = JSON.parse(result.stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect('code' in result ? result.code : 0).toBe(0);
  });

  it('generates a typed client that the program in test/openapi-client compiles against', { timeout: 60_000 }, async () => {
    await run(bin('openapi-typescript'), [documentFile, '--output', typesFile], { cwd: dir, env: quiet });
    const tsconfig = {
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
        paths: { 'anchorage-openapi': [typesFile] },
      },
      files: [join(program, 'client.ts'), join(program, 'types.ts')],
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    const compiled = await run(bin('tsc'), ['-p', join(dir, 'tsconfig.json')], { cwd: root }).catch(
      (error: { code: number; stdout: string }) => error,
    );
    expect(compiled.stdout).toBe('');
    expect('code' in compiled ? compiled.code : 0).toBe(0);
  });

  it('runs the typed program against the service: read, edit with If-Match, 304, stale 412', async () => {
    const customer = await createCustomer(h.services);
    await seedSite(h.services, customer.email, {
      articles: [{ status: 'published', title: 'Check-ups', body: '<p>See a dentist twice a year.</p>' }],
    });
    const { port } = h.app.server.address() as AddressInfo;
    const title = `Check-ups ${token()}`;
    const { retitleFirstArticle } = (await import(join(program, 'client.ts'))) as Program;
    const outcome = await retitleFirstArticle(`http://127.0.0.1:${port}`, customer.key, title);
    expect(outcome.article.title).toBe(title);
    expect(outcome.revalidated).toBe(304);
    expect(outcome.stale.error).toBe('precondition_failed');
  });
});
