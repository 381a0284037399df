import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/core/secrets.js';
import { toTimestamp } from '../../src/core/time.js';
import { issueMcpToken } from '../fuzz/hostile.js';
import { createCustomer, type Harness, useHarness } from '../helpers/harness.js';
import { csrfOf, decodeEntities, InjectBrowser } from './browser.js';

type Customer = Awaited<ReturnType<typeof createCustomer>>;

/** A multipart form as a browser sends it, with the browser's session cookie. */
async function postFile(h: Harness, browser: InjectBrowser, fields: Record<string, string>, file?: Buffer | string) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file !== undefined) form.append('file', new Blob([typeof file === 'string' ? file : new Uint8Array(file)], { type: 'application/json' }), 'delivery.json');
  const encoded = new Response(form);
  return h.app.inject({
    method: 'POST',
    url: '/app/staff/imports',
    headers: { cookie: `${browser.sessionCookieName}=${browser.cookie}`, 'content-type': encoded.headers.get('content-type')! },
    payload: Buffer.from(await encoded.arrayBuffer()),
  });
}

const delivery = (owner: string, backlinks: number) =>
  JSON.stringify({
    sites: [
      {
        owner,
        website_url: 'https://harbour.example',
        name: 'Harbour Bakery',
        articles: [{ url: 'https://harbour.example/bread', title: 'Bread', status: 'published', published_at: '2026-11-02T09:00:00Z', body: '<p>Sourdough.</p>' }],
        backlinks: Array.from({ length: backlinks }, (_, i) => ({ source_url: `https://source${i}.example/`, target_url: 'https://harbour.example/', category: 'industry', status: 'live', acquired_at: '2026-11-03T09:00:00Z' })),
      },
    ],
  });

/** Polls the progress endpoint until the upload's step (`checking` or `applying`) is over. */
async function after(state: 'checking' | 'applying', browser: InjectBrowser, page: string): Promise<{ state: string; rows: number; of: number }> {
  for (let i = 0; i < 2_400; i++) {
    const progress = (await browser.get(`${page}/progress`)).json() as { state: string; rows: number; of: number };
    if (progress.state !== state) return progress;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the upload is still ${state}`);
}
const applied = (browser: InjectBrowser, page: string) => after('applying', browser, page);

/** The child processes of this process that run a step of an import upload (Linux: /proc). */
function importChildren(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('import-upload');
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Kills the first import child of this process that appears (SIGKILL: it writes nothing more). */
async function killImportChild(): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    const [pid] = importChildren();
    if (pid !== undefined) {
      process.kill(pid, 'SIGKILL');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no import child started');
}

// Each check and apply starts a Node process (seconds on a busy machine, from the TypeScript sources).
describe('staff import a file in the UI: upload, dry run, apply', { timeout: 120_000 }, () => {
  const h = useHarness();
  let staff: Customer;
  let customer: Customer;
  let browser: InjectBrowser;

  const count = async (table: 'sites' | 'articles' | 'backlinks') =>
    Number((await h.services.db.kysely.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const counts = async () => ({ sites: await count('sites'), articles: await count('articles'), backlinks: await count('backlinks') });
  const upload = async (file?: Buffer | string, as = browser) => postFile(h, as, { _csrf: csrfOf((await as.get('/app/staff/imports')).body) }, file);
  /** Uploads `file` and waits for its check (and its process, and its record): the upload's address. */
  const uploadChecked = async (file: string) => {
    const uploaded = await upload(file);
    expect(uploaded.statusCode).toBe(303);
    const location = uploaded.headers.location as string;
    await after('checking', browser, location);
    await h.services.importUploads.settled();
    await h.services.activity.flush();
    return location;
  };

  it('sets up a staff member and a customer', async () => {
    staff = await createCustomer(h.services, { staff: true });
    customer = await createCustomer(h.services);
    browser = new InjectBrowser(h.app);
    expect((await browser.signIn(staff.email)).statusCode).toBe(303);
    const accountPage = await browser.get(`/app/staff/accounts/${customer.accountId}`);
    expect(accountPage.body).toContain('href="/app/staff/imports"');
  });

  it('a file with problems shows every one of them, with the dry run’s paths and messages, and writes nothing', async () => {
    const before = await counts();
    const file = JSON.stringify({
      sites: [
        {
          owner: 'nobody@example.test',
          website_url: 'ftp://harbour.example',
          articles: [{ url: 'https://harbour.example/a', status: 'wrong', body: '<p>x</p>' }],
          backlinks: [],
        },
      ],
    });
    const plan = await h.services.importer.dryRun(() => [file]);
    expect(plan.problems.length).toBeGreaterThan(1);
    const uploaded = await upload(file);
    expect(uploaded.statusCode).toBe(303);
    const location = uploaded.headers.location as string;
    expect(location).toMatch(/^\/app\/staff\/imports\/iu_[0-9A-Za-z]{40}$/);
    // The check runs in a child process; the page follows it, then shows what it found.
    const checking = await browser.get(location);
    expect(checking.statusCode).toBe(200);
    if (checking.body.includes('Checking the file…')) expect(checking.body).toContain('/assets/import-progress.js');
    expect(await after('checking', browser, location)).toMatchObject({ state: 'refused' });
    await h.services.importUploads.settled();
    await h.services.activity.flush();
    const page = decodeEntities((await browser.get(location)).body);
    expect(page).toContain(`The file has ${plan.problems.length} problems`);
    for (const problem of plan.problems) expect(page).toContain(`<li><code>${problem.path}</code>: ${problem.message}</li>`);
    expect(page).not.toContain('/apply"');
    const csrf = csrfOf(page);
    expect((await browser.post(`${location}/apply`, { _csrf: csrf })).statusCode).toBe(422);
    expect(await counts()).toEqual(before);
  });

  it('a good file shows the plan, then Apply imports it with progress, once; the same file again changes nothing', async () => {
    const before = await counts();
    const file = delivery(customer.email, 300);
    const location = await uploadChecked(file);
    const page = await browser.get(location);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('No problems. Nothing has been written yet');
    expect(page.body).toMatch(/New site[\s\S]*created<\/td><td class="num">1<\/td><td class="num">0<\/td><td class="num">0<\/td><td class="num">300<\/td>/);
    expect(await counts()).toEqual(before);

    const applying = await browser.post(`${location}/apply`, { _csrf: csrfOf(page.body) });
    expect(applying.statusCode).toBe(303);
    expect(applying.headers.location).toBe(location);
    const done = await applied(browser, location);
    expect(done).toMatchObject({ state: 'applied', rows: 302, of: 302 });
    expect(await counts()).toEqual({ sites: before.sites + 1, articles: before.articles + 1, backlinks: before.backlinks + 300 });
    const result = await browser.get(location);
    expect(result.body).toContain('The file was imported.');
    const siteId = (await h.services.db.kysely.selectFrom('sites').select('id').where('website_url', '=', 'https://harbour.example').executeTakeFirstOrThrow()).id;
    expect(result.body).toContain(`href="/app/sites/${siteId}"`);
    // Apply again (a reload, a second click): nothing more happens.
    expect((await browser.post(`${location}/apply`, { _csrf: csrfOf(result.body) })).statusCode).toBe(303);
    expect((await browser.get(`${location}/progress`)).json()).toMatchObject({ state: 'applied' });
    expect(await counts()).toEqual({ sites: before.sites + 1, articles: before.articles + 1, backlinks: before.backlinks + 300 });
    // The file is not kept once applied.
    const stored = await h.services.db.kysely.selectFrom('import_upload_files').select('upload_id').execute();
    expect(stored).toEqual([]);

    const againPage = await browser.get(await uploadChecked(file));
    expect(againPage.body).toMatch(/Site \d+<\/a><\/td><td>unchanged<\/td><td class="num">0<\/td><td class="num">0<\/td><td class="num">1<\/td><td class="num">0<\/td><td class="num">0<\/td><td class="num">300<\/td>/);

    await h.services.activity.flush();
    const records = await h.services.db.kysely.selectFrom('activity_log').select(['operation', 'user_id', 'account_id', 'status']).where('operation', 'in', ['checkImport', 'applyImport']).orderBy('id').execute();
    expect(records).toEqual([
      { operation: 'checkImport', user_id: staff.userId, account_id: staff.accountId, status: 422 },
      { operation: 'checkImport', user_id: staff.userId, account_id: staff.accountId, status: 201 },
      { operation: 'applyImport', user_id: staff.userId, account_id: staff.accountId, status: 202 },
      { operation: 'checkImport', user_id: staff.userId, account_id: staff.accountId, status: 201 },
    ]);
    // The import's own record, for the account it touched, is the staff member's action in the UI (the CLI's are `cli`).
    const imported = await h.services.db.kysely.selectFrom('activity_log').select(['user_id', 'account_id', 'channel', 'status']).where('operation', '=', 'import').execute();
    expect(imported).toEqual([{ user_id: staff.userId, account_id: customer.accountId, channel: 'api', status: 200 }]);
  });

  it('a file that no longer passes when applied imports nothing and says why', async () => {
    const owner = await createCustomer(h.services);
    const location = await uploadChecked(delivery(owner.email, 2).replace('harbour.example', 'late.example'));
    const page = await browser.get(location);
    await h.services.db.kysely.deleteFrom('api_keys').where('user_id', '=', owner.userId).execute();
    await h.services.db.kysely.deleteFrom('users').where('id', '=', owner.userId).execute();
    const before = await counts();
    await browser.post(`${location}/apply`, { _csrf: csrfOf(page.body) });
    expect((await applied(browser, location)).state).toBe('failed');
    const failed = decodeEntities((await browser.get(location)).body);
    expect(failed).toContain('The file no longer passes the checks');
    expect(failed).toContain('$.sites[0].owner');
    expect(await counts()).toEqual(before);
  });

  it('refuses a missing file, a file over the multipart limit, a wrong CSRF token, another session and an unknown token', async () => {
    const before = await counts();
    const none = await upload(undefined);
    expect(none.statusCode).toBe(422);
    expect(none.body).toContain('Choose an import file');
    expect((await upload('')).statusCode).toBe(422);
    const large = await upload(Buffer.alloc(12 * 1024 * 1024 + 1, 0x20));
    expect(large.statusCode).toBe(413);
    expect(large.body).toContain('at most 12582912 bytes');
    expect((await postFile(h, browser, { _csrf: 'x'.repeat(32) }, delivery(customer.email, 1))).statusCode).toBe(403);
    // A malformed multipart body, or a file in another field, is refused, never a 5xx.
    const cookie = `${browser.sessionCookieName}=${browser.cookie}`;
    for (const [contentType, payload] of [
      ['multipart/form-data; boundary=x', 'garbage without a boundary'],
      ['multipart/form-data', '--x\r\n'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="file"; filename="a.json"\r\n\r\n{"sites":'],
    ]) {
      const malformed = await h.app.inject({ method: 'POST', url: '/app/staff/imports', headers: { cookie, 'content-type': contentType! }, payload });
      expect(malformed.statusCode, payload).toBeGreaterThanOrEqual(400);
      expect(malformed.statusCode, payload).toBeLessThan(500);
    }
    const form = new FormData();
    form.append('_csrf', csrfOf((await browser.get('/app/staff/imports')).body));
    form.append('other', new Blob(['{}']), 'other.json');
    const encoded = new Response(form);
    const wrongField = await h.app.inject({ method: 'POST', url: '/app/staff/imports', headers: { cookie, 'content-type': encoded.headers.get('content-type')! }, payload: Buffer.from(await encoded.arrayBuffer()) });
    expect(wrongField.statusCode).toBe(422);
    expect(wrongField.body).toContain('Send the import file in the field file.');

    const location = await uploadChecked(delivery(customer.email, 1));
    // Another session of the same staff member does not see it: the token is tied to the session that uploaded it.
    const elsewhere = new InjectBrowser(h.app);
    await elsewhere.signIn(staff.email);
    expect((await elsewhere.get(location)).statusCode).toBe(404);
    expect((await elsewhere.get(`${location}/progress`)).statusCode).toBe(404);
    expect((await elsewhere.post(`${location}/apply`, { _csrf: csrfOf((await elsewhere.get('/app/staff')).body) })).statusCode).toBe(404);
    for (const path of ['/app/staff/imports/iu_' + 'A'.repeat(40), '/app/staff/imports/nothing', `/app/staff/imports/${'iu_'.padEnd(5000, 'x')}`]) {
      expect((await browser.get(path)).statusCode).toBe(404);
    }
    expect(await counts()).toEqual(before);
    // No file received on the node's disk stays there: refused, too large, or checked.
    await h.services.importUploads.settled();
    expect(readdirSync(join(h.settings.dataDir, 'import-uploads'))).toEqual([]);
  });

  it('refuses customer sessions, API keys and MCP tokens on every import route', async () => {
    const before = await counts();
    const location = await uploadChecked(delivery(customer.email, 1));
    const customerBrowser = new InjectBrowser(h.app);
    await customerBrowser.signIn(customer.email);
    const csrf = csrfOf((await customerBrowser.get('/app')).body);
    expect((await customerBrowser.get('/app/staff/imports')).statusCode).toBe(403);
    expect((await postFile(h, customerBrowser, { _csrf: csrf }, delivery(customer.email, 1))).statusCode).toBe(403);
    expect((await customerBrowser.get(location)).statusCode).toBe(403);
    expect((await customerBrowser.get(`${location}/progress`)).statusCode).toBe(403);
    expect((await customerBrowser.post(`${location}/apply`, { _csrf: csrf })).statusCode).toBe(403);
    for (const bearer of [staff.key, await issueMcpToken(h, staff.userId)]) {
      const auth = { authorization: `Bearer ${bearer}` };
      for (const url of ['/app/staff/imports', location, `${location}/progress`]) {
        const response = await h.app.inject({ method: 'GET', url, headers: auth });
        expect(response.statusCode).toBe(303);
      }
      const form = new FormData();
      form.append('file', new Blob([delivery(customer.email, 1)]), 'delivery.json');
      const encoded = new Response(form);
      const posted = await h.app.inject({ method: 'POST', url: '/app/staff/imports', headers: { ...auth, 'content-type': encoded.headers.get('content-type')! }, payload: Buffer.from(await encoded.arrayBuffer()) });
      expect(posted.statusCode).toBe(303);
      expect(posted.headers.location).toBe('/app/sign-in');
      const apply = await h.app.inject({ method: 'POST', url: `${location}/apply`, headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
      expect(apply.statusCode).toBe(303);
      expect(apply.headers.location).toBe('/app/sign-in');
    }
    expect((await browser.get(`${location}/progress`)).json()).toMatchObject({ state: 'planned' });
    expect(await counts()).toEqual(before);
  });

  it('a check or an apply whose process dies leaves the upload failed, saying so; a stopping node waits for its children', async () => {
    const before = await counts();
    const file = delivery(customer.email, 3_000).replaceAll('harbour.example', 'killed.example');
    const [killed, checkedUpload] = await Promise.all([killImportChild(), upload(file)]);
    expect(killed).toBeUndefined();
    const location = checkedUpload.headers.location as string;
    expect(await after('checking', browser, location)).toMatchObject({ state: 'failed' });
    const failedCheck = decodeEntities((await browser.get(location)).body);
    expect(failedCheck).toContain('The check of the file failed on our side; nothing was imported.');
    expect(failedCheck).toContain('Upload an import file');

    // Its check's process has exited: the next one is the apply's.
    const planned = await uploadChecked(file);
    const page = await browser.get(planned);
    await Promise.all([killImportChild(), browser.post(`${planned}/apply`, { _csrf: csrfOf(page.body) })]);
    expect(await applied(browser, planned)).toMatchObject({ state: 'failed' });
    expect(decodeEntities((await browser.get(planned)).body)).toMatch(/The import failed on our side(; nothing was imported| and stopped part-way)/);
    if (h.services.db.dialect === 'postgres') expect(await counts()).toEqual(before);
    await h.services.importUploads.settled();
    expect(importChildren()).toEqual([]);
    expect(readdirSync(join(h.settings.dataDir, 'import-uploads'))).toEqual([]);

    // A node stopping now waits for the check it started.
    const waited = await upload(delivery(customer.email, 1).replaceAll('harbour.example', 'waited.example'));
    await h.services.importUploads.settled();
    expect((await browser.get(`${waited.headers.location as string}/progress`)).json()).toMatchObject({ state: 'planned' });
    await h.services.activity.flush();
    const records = await h.services.db.kysely.selectFrom('activity_log').select('status').where('operation', '=', 'checkImport').orderBy('id', 'desc').limit(3).execute();
    expect(records.map((r) => r.status)).toEqual([201, 201, 500]);
  });

  it('an upload whose process went with its node shows failed a minute after its last stamp; one stamped since stays under way', async () => {
    const planned = await uploadChecked(delivery(customer.email, 1).replaceAll('harbour.example', 'lost.example'));
    const progress = async () => (await browser.get(`${planned}/progress`)).json() as { state: string };
    const ago = (ms: number) => toTimestamp(new Date(h.clock.now().getTime() - ms));
    const row = () => h.services.db.kysely.updateTable('import_uploads').where('token_hash', '=', sha256(planned.split('/').pop()!));
    // As a node leaves it that took the apply and stopped, its child with it.
    await row().set({ state: 'applying', updated_at: ago(60_000) }).execute();
    expect(await progress()).toMatchObject({ state: 'applying' });
    await row().set({ updated_at: ago(61_000) }).execute();
    expect(await progress()).toMatchObject({ state: 'failed' });
    expect(decodeEntities((await browser.get(planned)).body)).toMatch(/The import failed on our side(; nothing was imported| and stopped part-way)/);
    const page = await browser.get(planned);
    expect((await browser.post(`${planned}/apply`, { _csrf: csrfOf(page.body) })).statusCode).toBe(303);
    expect(await progress()).toMatchObject({ state: 'failed' });
  });
});
