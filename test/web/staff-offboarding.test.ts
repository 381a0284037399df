import { sql } from 'kysely';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { Actor } from '../../src/services/actor.js';
import { issueMcpToken } from '../fuzz/hostile.js';
import { createCustomer, type Harness, useHarness } from '../helpers/harness.js';
import { csrfOf, decodeEntities, InjectBrowser } from './browser.js';

type Customer = Awaited<ReturnType<typeof createCustomer>>;

/** Every table that holds rows of an account: the condition on its rows of account `A` (its users' and sites' too). */
const ownedRows: Record<string, string> = {
  accounts: 'id = A',
  users: 'account_id = A',
  sessions: 'user_id in (select id from users where account_id = A)',
  api_keys: 'account_id = A',
  oauth_grants: 'account_id = A',
  oauth_tokens: 'grant_id in (select id from oauth_grants where account_id = A)',
  oauth_codes: 'user_id in (select id from users where account_id = A)',
  sites: 'account_id = A',
  articles: 'site_id in (select id from sites where account_id = A)',
  revisions: 'account_id = A',
  backlinks: 'site_id in (select id from sites where account_id = A)',
  backlink_day_counts: 'site_id in (select id from sites where account_id = A)',
  backlink_month_counts: 'site_id in (select id from sites where account_id = A)',
  article_day_counts: 'site_id in (select id from sites where account_id = A)',
  article_month_counts: 'site_id in (select id from sites where account_id = A)',
  report_shares: 'account_id = A',
  report_subscriptions: 'account_id = A',
  report_mail_sent: 'subscription_id in (select id from report_subscriptions where account_id = A)',
  idempotency_keys: 'account_id = A',
  edit_counts: 'account_id = A',
  password_links: 'user_id in (select id from users where account_id = A)',
};

/** The rows of each table that account `accountId` owns. */
async function rowsOf(h: Harness, accountId: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const [table, condition] of Object.entries(ownedRows)) {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where ${sql.raw(condition.replaceAll('A', String(accountId)))}`.execute(h.services.db.kysely);
    counts[table] = Number(rows[0]!.n);
  }
  return counts;
}

/** A PNG of one colour: the same colour twice is the same stored image (names are content hashes). */
const png = (colour: string) => sharp({ create: { width: 8, height: 8, channels: 3, background: colour } }).png().toBuffer();

async function uploadImage(h: Harness, key: string, articleId: number, image: Buffer): Promise<string> {
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'image.png');
  const encoded = new Response(form);
  const response = await h.app.inject({
    method: 'POST',
    url: `/api/v1/articles/${articleId}/featured-image`,
    headers: { authorization: `Bearer ${key}`, 'content-type': encoded.headers.get('content-type')! },
    payload: Buffer.from(await encoded.arrayBuffer()),
  });
  expect(response.statusCode).toBe(200);
  return new URL((response.json() as { data: { featured_image_url: string } }).data.featured_image_url).pathname;
}

/** A customer with everything an account can own: sites, articles, revisions, backlinks, keys, a connection, a session, shares, report e-mails, images. */
async function fullCustomer(h: Harness, name: string, images: Buffer[]) {
  const customer = await createCustomer(h.services);
  await h.services.db.kysely.updateTable('accounts').set({ name }).where('id', '=', customer.accountId).execute();
  const imported = await h.services.importer.run({
    sites: [
      {
        owner: customer.email,
        website_url: `https://${name.toLowerCase().replace(/\W+/g, '-')}.example`,
        name,
        articles: [1, 2].map((i) => ({ url: `https://${i}.${customer.accountId}.example/a`, title: `Article ${i}`, status: 'published', published_at: '2026-11-02T09:00:00Z', body: `<p>Body ${i}</p>` })),
        backlinks: [1, 2, 3].map((i) => ({ source_url: `https://source${i}.example/`, target_url: `https://${customer.accountId}.example/`, category: 'industry', acquired_at: '2026-11-03T09:00:00Z', status: 'live' })),
      },
    ],
  });
  const site = imported.sites[0]!;
  const articleId = site.article_ids[0]!;
  const patched = await h.app.inject({
    method: 'PATCH',
    url: `/api/v1/articles/${articleId}`,
    headers: { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json', 'idempotency-key': `k-${name}`, 'user-agent': `Agent of ${name}` },
    payload: { title: `Edited by ${name}` },
  });
  expect(patched.statusCode).toBe(200);
  const imagePaths: string[] = [];
  for (const [i, image] of images.entries()) imagePaths.push(await uploadImage(h, customer.key, site.article_ids[i]!, image));
  const siteRow = await h.services.db.kysely.selectFrom('sites').selectAll().where('id', '=', site.id).executeTakeFirstOrThrow();
  await h.services.reportShares.create(siteRow, customer.userId, { name: 'Board', days: 30 });
  await h.services.reportSubscriptions.subscribe(siteRow, customer.userId, `board@${customer.accountId}.example`);
  const subscription = await h.services.db.kysely.selectFrom('report_subscriptions').select('id').where('site_id', '=', site.id).executeTakeFirstOrThrow();
  await h.services.db.kysely.insertInto('report_mail_sent').values({ subscription_id: subscription.id, month: '2026-10', sent_at: '2026-11-01T06:00:00Z' }).execute();
  const mcpToken = await issueMcpToken(h, customer.userId);
  const browser = new InjectBrowser(h.app);
  expect((await browser.signIn(customer.email)).statusCode).toBe(303);
  return { ...customer, name, siteId: site.id, articleId, imagePaths, mcpToken, browser };
}

const apiStatus = async (h: Harness, key: string) => (await h.app.inject({ method: 'GET', url: '/api/v1/sites', headers: { authorization: `Bearer ${key}` } })).statusCode;
const mcpStatus = async (h: Harness, token: string) =>
  (
    await h.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    })
  ).statusCode;

describe('staff delete an account, and download its export', () => {
  const h = useHarness();
  let staff: Customer;
  let browser: InjectBrowser;

  const accountPath = (accountId: number) => `/app/staff/accounts/${accountId}`;
  async function deleteForm(accountId: number, confirm: string) {
    const csrf = csrfOf((await browser.get(accountPath(accountId))).body);
    return browser.post(`${accountPath(accountId)}/delete`, { _csrf: csrf, confirm });
  }

  it('sets up a staff member', async () => {
    staff = await createCustomer(h.services, { staff: true });
    browser = new InjectBrowser(h.app);
    expect((await browser.signIn(staff.email)).statusCode).toBe(303);
  });

  it('deletes everything the account owns, keeps its activity without personal data, and refuses its key at once', async () => {
    const leaving = await fullCustomer(h, 'Harbour Bakery', [await png('#123456'), await png('#00ff00')]);
    const staying = await fullCustomer(h, 'Quay Florist', [await png('#00ff00')]);
    const [unshared, shared] = leaving.imagePaths as [string, string];
    // A second user, still waiting for their password link.
    const waiting = await h.services.db.kysely
      .insertInto('users')
      .values({ account_id: leaving.accountId, email: 'baker@harbour.example', password_hash: '', staff: 0, created_at: '2026-11-01T00:00:00Z' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const linkPage = await browser.get(accountPath(leaving.accountId));
    expect((await browser.post(`${accountPath(leaving.accountId)}/users/${waiting.id}/link`, { _csrf: csrfOf(linkPage.body) })).statusCode).toBe(303);
    expect(shared).toBe(staying.imagePaths[0]);
    // The key is looked up once and kept in memory by this node.
    expect(await apiStatus(h, leaving.key)).toBe(200);
    expect(await apiStatus(h, leaving.key)).toBe(200);
    expect(await mcpStatus(h, leaving.mcpToken)).not.toBe(401);
    await h.services.activity.flush();
    const before = await rowsOf(h, leaving.accountId);
    for (const [table, n] of Object.entries(before)) if (table !== 'oauth_codes') expect(n, table).toBeGreaterThan(0);
    const stayingBefore = await rowsOf(h, staying.accountId);

    const page = await browser.get(accountPath(leaving.accountId));
    expect(page.statusCode).toBe(200);
    expect(decodeEntities(page.body)).toContain('Type the account’s name, <strong>Harbour Bakery</strong>, to confirm');
    for (const wrong of ['', 'harbour bakery', 'Harbour Bakery ', 'Quay Florist']) {
      const refused = await deleteForm(leaving.accountId, wrong);
      expect(refused.statusCode).toBe(422);
      expect(refused.body).toContain('Nothing was deleted');
    }
    expect(await rowsOf(h, leaving.accountId)).toEqual(before);
    expect(await apiStatus(h, leaving.key)).toBe(200);

    const csrf = csrfOf((await browser.get(accountPath(leaving.accountId))).body);
    // The key is used just before the deletion, so this node keeps it, and just after.
    expect(await apiStatus(h, leaving.key)).toBe(200);
    const deleted = await browser.post(`${accountPath(leaving.accountId)}/delete`, { _csrf: csrf, confirm: 'Harbour Bakery' });
    expect(await apiStatus(h, leaving.key)).toBe(401);
    expect(deleted.statusCode).toBe(303);
    expect(deleted.headers.location).toBe('/app/staff?deleted=1');
    const done = decodeEntities((await browser.get('/app/staff?deleted=1')).body);
    expect(done).toContain('The account <strong>Harbour Bakery</strong> was deleted, with 2 users, 1 site, 2 articles and 3 backlinks.');
    expect(decodeEntities((await browser.get('/app/staff?deleted=1')).body)).not.toContain('was deleted');

    // The connection and the session are refused too.
    expect(await mcpStatus(h, leaving.mcpToken)).toBe(401);
    expect((await leaving.browser.get('/app')).statusCode).toBe(303);
    expect((await browser.get(accountPath(leaving.accountId))).statusCode).toBe(404);
    expect((await h.app.inject({ method: 'GET', url: `/api/v1/sites/${leaving.siteId}/articles`, headers: { authorization: `Bearer ${staff.key}` } })).statusCode).toBe(404);

    const after = await rowsOf(h, leaving.accountId);
    expect(Object.values(after).every((n) => n === 0), JSON.stringify(after)).toBe(true);
    const db = h.services.db.kysely;
    // Its own image is gone; the one another account shows stays.
    expect((await h.app.inject({ method: 'GET', url: unshared })).statusCode).toBe(404);
    expect((await h.app.inject({ method: 'GET', url: shared })).statusCode).toBe(200);
    // The other account is untouched.
    expect(await rowsOf(h, staying.accountId)).toEqual(stayingBefore);
    expect(await apiStatus(h, staying.key)).toBe(200);

    // Its activity stays, without anything that names a person; the staff member's record says who deleted it.
    await h.services.activity.flush();
    const kept = await db.selectFrom('activity_log').selectAll().where('account_id', '=', leaving.accountId).execute();
    expect(kept.length).toBeGreaterThan(0);
    for (const row of kept) expect([row.user_id, row.api_key_id, row.mcp_grant_id, row.client_ip, row.user_agent]).toEqual([null, null, null, null, null]);
    expect(kept.map((row) => row.operation)).toContain('editArticle');
    const record = await db.selectFrom('activity_log').selectAll().where('operation', '=', 'deleteAccount').executeTakeFirstOrThrow();
    expect(record).toMatchObject({ account_id: staff.accountId, user_id: staff.userId, path: `/app/staff/accounts/${leaving.accountId}/delete`, status: 200 });
    const untouched = await db.selectFrom('activity_log').select(['user_id', 'user_agent']).where('account_id', '=', staying.accountId).where('operation', '=', 'editArticle').executeTakeFirstOrThrow();
    expect(untouched).toEqual({ user_id: staying.userId, user_agent: 'Agent of Quay Florist' });
  });

  it('a failure part-way changes nothing', async () => {
    const customer = await fullCustomer(h, 'Blocked Ltd', []);
    const db = h.services.db.kysely;
    // A row the deletion does not know, which names the account's user: deleting the user fails.
    await sql`create table test_blocker (user_id integer not null references users (id))`.execute(db);
    try {
      await sql`insert into test_blocker (user_id) values (${customer.userId})`.execute(db);
      await h.services.activity.flush();
      const before = await rowsOf(h, customer.accountId);
      const activity = await db.selectFrom('activity_log').selectAll().where('account_id', '=', customer.accountId).orderBy('id').execute();
      expect((await deleteForm(customer.accountId, 'Blocked Ltd')).statusCode).toBe(500);
      expect(await rowsOf(h, customer.accountId)).toEqual(before);
      expect(await db.selectFrom('activity_log').selectAll().where('account_id', '=', customer.accountId).orderBy('id').execute()).toEqual(activity);
      expect(await apiStatus(h, customer.key)).toBe(200);
      for (const path of customer.imagePaths) expect((await h.app.inject({ method: 'GET', url: path })).statusCode).toBe(200);
    } finally {
      await sql`drop table test_blocker`.execute(db);
    }
  });

  it('staff cannot delete their own account or one holding a staff user', async () => {
    const own = await browser.get(accountPath(staff.accountId));
    expect(own.body).toContain('This is your own account: staff cannot delete it.');
    expect(own.body).not.toContain('/delete"');
    const name = (await h.services.uiQueries.account(staff.accountId))!.name;
    expect((await deleteForm(staff.accountId, name)).statusCode).toBe(403);
    const colleague = await createCustomer(h.services, { staff: true });
    const colleagueName = (await h.services.uiQueries.account(colleague.accountId))!.name;
    expect((await browser.get(accountPath(colleague.accountId))).body).toContain('Anchorage does not delete staff accounts');
    expect((await deleteForm(colleague.accountId, colleagueName)).statusCode).toBe(403);
    expect(await h.services.uiQueries.account(staff.accountId)).toBeDefined();
    expect(await h.services.uiQueries.account(colleague.accountId)).toBeDefined();
    expect((await deleteForm(999_999, 'Nobody')).statusCode).toBe(404);
  });

  it('the export download streams the same bytes as the CLI, as an attachment, and is recorded', async () => {
    const customer = await fullCustomer(h, 'Export Co', []);
    const response = await browser.get(`${accountPath(customer.accountId)}/export`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-disposition']).toBe(`attachment; filename="anchorage-account-${customer.accountId}.json"`);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    let expected = '';
    for await (const piece of h.services.exporter.exportAccount(customer.accountId)) expected += piece;
    expect(response.body).toBe(`${expected}\n`);
    expect(JSON.parse(response.body).sites[0].articles).toHaveLength(2);
    expect((await browser.get(accountPath(customer.accountId))).body).toContain(`href="${accountPath(customer.accountId)}/export"`);
    await h.services.activity.flush();
    const record = await h.services.db.kysely.selectFrom('activity_log').selectAll().where('operation', '=', 'exportAccount').executeTakeFirstOrThrow();
    expect(record).toMatchObject({ account_id: staff.accountId, user_id: staff.userId, path: `${accountPath(customer.accountId)}/export`, status: 200 });
    expect((await browser.get('/app/staff/accounts/999999/export')).statusCode).toBe(404);
  });

  it('customer sessions, API keys and MCP tokens are refused on the delete and export routes; nothing changes', async () => {
    const target = await fullCustomer(h, 'Target Inc', []);
    const before = await rowsOf(h, target.accountId);
    const other = await createCustomer(h.services);
    const customerBrowser = new InjectBrowser(h.app);
    await customerBrowser.signIn(other.email);
    const csrf = csrfOf((await customerBrowser.get('/app')).body);
    expect((await customerBrowser.post(`${accountPath(target.accountId)}/delete`, { _csrf: csrf, confirm: 'Target Inc' })).statusCode).toBe(403);
    expect((await customerBrowser.get(`${accountPath(target.accountId)}/export`)).statusCode).toBe(403);
    for (const bearer of [staff.key, await issueMcpToken(h, staff.userId)]) {
      const posted = await h.app.inject({
        method: 'POST',
        url: `${accountPath(target.accountId)}/delete`,
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'confirm=Target+Inc',
      });
      expect(posted.statusCode).toBe(303);
      expect(posted.headers.location).toBe('/app/sign-in');
      const exported = await h.app.inject({ method: 'GET', url: `${accountPath(target.accountId)}/export`, headers: { authorization: `Bearer ${bearer}` } });
      expect(exported.statusCode).toBe(303);
    }
    expect((await browser.post(`${accountPath(target.accountId)}/delete`, { confirm: 'Target Inc' })).statusCode).toBe(403);
    expect(await rowsOf(h, target.accountId)).toEqual(before);
  });

  it('the service refuses staff credentials other than a UI session', async () => {
    const target = await createCustomer(h.services);
    const name = (await h.services.uiQueries.account(target.accountId))!.name;
    const byKey: Actor = { accountId: staff.accountId, userId: staff.userId, credential: { kind: 'api_key', id: staff.keyId }, channel: 'api', staff: true, scopes: ['read', 'write'], request: null };
    await expect(h.services.accountDeletion.deleteAccount(target.accountId, name, byKey)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(h.services.exporter.staffDownload({ ...byKey, credential: { kind: 'mcp_grant', id: 1 }, channel: 'mcp' }, target.accountId)).rejects.toMatchObject({ code: 'forbidden' });
    expect(await h.services.uiQueries.account(target.accountId)).toBeDefined();
  });
});

