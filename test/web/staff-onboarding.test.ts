import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { Actor } from '../../src/services/actor.js';
import { createCustomer, type Harness, startHarness } from '../helpers/harness.js';
import { type Inbox, startInbox } from '../helpers/smtp.js';
import { issueMcpToken } from '../fuzz/hostile.js';
import { csrfOf, decodeEntities, InjectBrowser } from './browser.js';

/** The one-time link on a page, as the staff member copies it. */
const linkOn = (page: string): string | undefined => /value="(http[^"]*\/app\/welcome\/pl_[0-9A-Za-z]{40})"/.exec(page)?.[1];
const pathOf = (link: string): string => new URL(link).pathname;

async function counts(h: Harness) {
  const db = h.services.db.kysely;
  const count = async (table: 'accounts' | 'users' | 'sites' | 'password_links') => Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const usedLinks = Number((await db.selectFrom('password_links').select((eb) => eb.fn.countAll().as('n')).where('used_at', 'is not', null).executeTakeFirstOrThrow()).n);
  return { accounts: await count('accounts'), users: await count('users'), sites: await count('sites'), links: await count('password_links'), usedLinks };
}

async function staffActivity(h: Harness, accountId: number) {
  await h.services.activity.flush();
  return h.services.db.kysely.selectFrom('activity_log').select(['operation', 'user_id', 'account_id', 'path', 'status']).where('account_id', '=', accountId).where('operation', 'in', ['createAccount', 'createSite']).orderBy('id').execute();
}

describe('staff onboarding through the UI', () => {
  let h: Harness;
  let staff: Awaited<ReturnType<typeof createCustomer>>;
  let customer: Awaited<ReturnType<typeof createCustomer>>;
  let browser: InjectBrowser;

  beforeAll(async () => {
    h = await startHarness();
    staff = await createCustomer(h.services, { staff: true });
    customer = await createCustomer(h.services);
    browser = new InjectBrowser(h.app);
    await browser.signIn(staff.email);
  });

  afterAll(async () => {
    await h?.close();
  });

  async function createAccount(form: Record<string, string>) {
    const csrf = csrfOf((await browser.get('/app/staff')).body);
    return browser.post('/app/staff/accounts', { _csrf: csrf, ...form });
  }

  it('creates an account and its user, shows the one-time link once, and logs it as the staff member', async () => {
    const before = await counts(h);
    const created = await createAccount({ account: 'Harbour Bakery', email: 'Owner@Harbour.example' });
    expect(created.statusCode).toBe(303);
    const location = created.headers.location as string;
    expect(location).toMatch(/^\/app\/staff\/accounts\/\d+\?created=1$/);
    expect(location).not.toContain('pl_');
    const page = await browser.get(location);
    expect(page.statusCode).toBe(200);
    const link = linkOn(page.body)!;
    expect(link).toMatch(new RegExp(`^${h.settings.publicUrl}/app/welcome/pl_`));
    expect(decodeEntities(page.body)).toContain('Password link for owner@harbour.example');
    expect(page.body).toContain('E-mail is not set up on this service');
    // Shown once: a reload no longer has it, and only its hash is stored.
    const again = await browser.get(location);
    expect(linkOn(again.body)).toBeUndefined();
    expect(again.body).toContain('Anchorage cannot show it again');
    const token = link.split('/').at(-1)!;
    const stored = await h.services.db.kysely.selectFrom('password_links').selectAll().execute();
    expect(stored.map((row) => row.token_hash)).not.toContain(token);
    expect(await counts(h)).toEqual({ ...before, accounts: before.accounts + 1, users: before.users + 1, links: before.links + 1, usedLinks: before.usedLinks });
    // No password yet: nobody signs in as the new user before they choose one.
    expect(await h.services.users.verifyPassword('owner@harbour.example', '')).toBeUndefined();
    expect((await staffActivity(h, staff.accountId)).at(-1)).toMatchObject({ operation: 'createAccount', user_id: staff.userId, status: 201 });
  });

  it('the link lets the user choose a password under the sign-up rules, signs them in, and works once', async () => {
    const created = await createAccount({ account: 'Quay Florist', email: 'flora@quay.example' });
    const link = linkOn((await browser.get(created.headers.location as string)).body)!;
    const visitor = new InjectBrowser(h.app);
    const opened = await visitor.get(pathOf(link));
    expect(opened.statusCode).toBe(200);
    expect(opened.body).toContain('flora@quay.example');
    const csrf = csrfOf(opened.body);
    const short = await visitor.post(pathOf(link), { _csrf: csrf, password: 'short' });
    expect(short.statusCode).toBe(422);
    expect(short.body).toContain('at least 10 characters');
    expect(await h.services.users.verifyPassword('flora@quay.example', 'short')).toBeUndefined();
    // CSRF is checked as on every other form.
    expect((await visitor.post(pathOf(link), { _csrf: 'x'.repeat(32), password: 'a long enough password' })).statusCode).toBe(403);
    const saved = await visitor.post(pathOf(link), { _csrf: csrf, password: 'a long enough password' });
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe('/app');
    const home = await visitor.get('/app');
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain('flora@quay.example');
    expect(await h.services.users.verifyPassword('flora@quay.example', 'a long enough password')).toBeDefined();
    const reused = await new InjectBrowser(h.app).get(pathOf(link));
    expect(reused.statusCode).toBe(404);
    expect(reused.body).toContain('used already');
    const reposted = await visitor.post(pathOf(link), { _csrf: csrfOf(home.body), password: 'another long password' });
    expect(reposted.statusCode).toBe(404);
    expect(await h.services.users.verifyPassword('flora@quay.example', 'another long password')).toBeUndefined();
  });

  it('a link expires after 7 days; an unknown or malformed one names nothing', async () => {
    const created = await createAccount({ account: '', email: 'late@quay.example' });
    const link = linkOn((await browser.get(created.headers.location as string)).body)!;
    const start = h.clock.now().toISOString();
    try {
      h.clock.set(new Date(h.clock.now().getTime() + 7 * 86_400_000 + 1000).toISOString());
      const expired = await new InjectBrowser(h.app).get(pathOf(link));
      expect(expired.statusCode).toBe(404);
      expect(expired.body).toContain('expired');
    } finally {
      h.clock.set(start);
    }
    for (const path of ['/app/welcome/pl_' + 'A'.repeat(40), '/app/welcome/nothing', `/app/welcome/${'pl_'.padEnd(5000, 'x')}`]) {
      expect((await new InjectBrowser(h.app).get(path)).statusCode).toBe(404);
    }
    // The account name defaults to the e-mail, as `user create` does.
    expect((await h.services.uiQueries.accounts()).some((account) => account.name === 'late@quay.example')).toBe(true);
  });

  it('a new link for a user still without a password replaces the earlier ones; never for a user with a password', async () => {
    const created = await createAccount({ account: 'Lost Link', email: 'lost@link.example' });
    const accountPath = (created.headers.location as string).split('?')[0]!;
    const accountId = Number(accountPath.split('/').at(-1));
    const first = linkOn((await browser.get(created.headers.location as string)).body)!;
    const page = await browser.get(accountPath);
    expect(page.body).toContain('Waiting for a password');
    const userId = (await h.services.users.byEmail('lost@link.example'))!.id;
    const renewed = await browser.post(`${accountPath}/users/${userId}/link`, { _csrf: csrfOf(page.body) });
    expect(renewed.statusCode).toBe(303);
    const second = linkOn((await browser.get(renewed.headers.location as string)).body)!;
    expect(second).not.toBe(first);
    expect((await new InjectBrowser(h.app).get(pathOf(first))).statusCode).toBe(404);
    const visitor = new InjectBrowser(h.app);
    const opened = await visitor.get(pathOf(second));
    expect((await visitor.post(pathOf(second), { _csrf: csrfOf(opened.body), password: 'found my link again' })).statusCode).toBe(303);
    await h.services.activity.flush();
    const logged = await h.services.db.kysely.selectFrom('activity_log').select(['user_id', 'path']).where('operation', '=', 'createPasswordLink').execute();
    expect(logged).toEqual([{ user_id: staff.userId, path: `${accountPath}/users/${userId}/link` }]);
    // With a password chosen (and for staff, and for another account's user) there is no link to make.
    const csrf = csrfOf((await browser.get(accountPath)).body);
    expect((await browser.get(accountPath)).body).not.toContain('Waiting for a password');
    for (const [account, user] of [[accountId, userId], [staff.accountId, staff.userId], [accountId, customer.userId]]) {
      expect((await browser.post(`/app/staff/accounts/${account}/users/${user}/link`, { _csrf: csrf })).statusCode).toBe(404);
    }
  });

  it('refuses a bad or taken e-mail and a long account name, changing nothing', async () => {
    const before = await counts(h);
    for (const form of [
      { account: 'X', email: 'not an address' },
      { account: 'X', email: customer.email.toUpperCase() },
      { account: 'x'.repeat(201), email: 'fresh@quay.example' },
    ]) {
      const refused = await createAccount(form);
      expect(refused.statusCode).toBe(422);
      expect(refused.body).toContain('Nothing was saved');
    }
    expect(await counts(h)).toEqual(before);
  });

  it('adds a site with the import rules, refusing a bad or repeated address, and logs it', async () => {
    const created = await createAccount({ account: 'Site Owners', email: 'sites@owners.example' });
    const accountPath = (created.headers.location as string).split('?')[0]!;
    const accountId = Number(accountPath.split('/').at(-1));
    const add = async (form: Record<string, string>) => browser.post(`${accountPath}/sites`, { _csrf: csrfOf((await browser.get(accountPath)).body), ...form });
    const before = await counts(h);
    for (const form of [
      { name: 'No address', website_url: '', language: 'en' },
      { name: 'Bad scheme', website_url: 'ftp://owners.example', language: 'en' },
      { name: 'x'.repeat(100_001), website_url: 'https://owners.example', language: 'en' },
    ]) {
      const refused = await add(form);
      expect(refused.statusCode).toBe(422);
      expect(refused.body).toContain('Nothing was saved');
    }
    expect(await counts(h)).toEqual(before);
    const added = await add({ name: 'Owners\nShop', website_url: 'https://owners.example', language: 'de' });
    expect(added.statusCode).toBe(303);
    expect(added.headers.location).toBe(accountPath);
    const sites = await h.services.uiQueries.sitesOfAccount(accountId);
    expect(sites.map((site) => [site.name, site.website_url, site.language])).toEqual([['Owners Shop', 'https://owners.example', 'de']]);
    expect((await browser.get(accountPath)).body).toContain('Owners Shop');
    const repeated = await add({ name: 'Again', website_url: 'https://owners.example', language: '' });
    expect(repeated.statusCode).toBe(422);
    expect(repeated.body).toContain('has a site at this address already');
    expect((await h.services.uiQueries.sitesOfAccount(accountId)).length).toBe(1);
    expect((await staffActivity(h, staff.accountId)).at(-1)).toMatchObject({ operation: 'createSite', user_id: staff.userId, path: `${accountPath}/sites`, status: 201 });
    expect((await add({ name: 'Nobody', website_url: 'https://nobody.example', language: '' })).statusCode).toBe(303);
    const unknown = await browser.post('/app/staff/accounts/999999/sites', { _csrf: csrfOf((await browser.get(accountPath)).body), name: 'N', website_url: 'https://n.example', language: '' });
    expect(unknown.statusCode).toBe(404);
  });

  it('refuses customer sessions, API keys, MCP tokens and forms without the CSRF token; nothing changes', async () => {
    const before = await counts(h);
    const target = (await h.services.uiQueries.accounts()).find((account) => account.id === customer.accountId)!;
    const customerBrowser = new InjectBrowser(h.app);
    await customerBrowser.signIn(customer.email);
    const csrf = csrfOf((await customerBrowser.get('/app')).body);
    expect((await customerBrowser.get('/app/staff')).statusCode).toBe(403);
    expect((await customerBrowser.get(`/app/staff/accounts/${target.id}`)).statusCode).toBe(403);
    expect((await customerBrowser.post('/app/staff/accounts', { _csrf: csrf, account: 'Sneaky', email: 'sneaky@example.test' })).statusCode).toBe(403);
    expect((await customerBrowser.post(`/app/staff/accounts/${target.id}/sites`, { _csrf: csrf, name: 'Sneaky', website_url: 'https://sneaky.example', language: '' })).statusCode).toBe(403);
    const waiting = (await h.services.db.kysely.selectFrom('users').select(['id', 'account_id']).where('password_hash', '=', '').executeTakeFirstOrThrow());
    expect((await customerBrowser.post(`/app/staff/accounts/${waiting.account_id}/users/${waiting.id}/link`, { _csrf: csrf })).statusCode).toBe(403);

    const staffKey = (await h.services.keys.create(staff.userId, { name: 'admin' })).key;
    const mcpToken = await issueMcpToken(h, staff.userId);
    for (const bearer of [staffKey, mcpToken]) {
      for (const [url, form] of [
        ['/app/staff/accounts', { account: 'By token', email: 'token@example.test' }],
        [`/app/staff/accounts/${target.id}/sites`, { name: 'By token', website_url: 'https://token.example', language: '' }],
        [`/app/staff/accounts/${waiting.account_id}/users/${waiting.id}/link`, {}],
      ] as const) {
        const response = await h.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString() });
        expect(response.statusCode).toBe(303);
        expect(response.headers.location).toBe('/app/sign-in');
      }
      const page = await h.app.inject({ method: 'GET', url: '/app/staff', headers: { authorization: `Bearer ${bearer}` } });
      expect(page.statusCode).toBe(303);
    }

    const noCsrf = await browser.post('/app/staff/accounts', { account: 'No token', email: 'nocsrf@example.test' });
    expect(noCsrf.statusCode).toBe(403);
    const wrongCsrf = await browser.post(`/app/staff/accounts/${target.id}/sites`, { _csrf: 'y'.repeat(32), name: 'No token', website_url: 'https://nocsrf.example', language: '' });
    expect(wrongCsrf.statusCode).toBe(403);
    expect(await counts(h)).toEqual(before);
  });

  it('the services refuse staff credentials other than a UI session', async () => {
    const byKey: Actor = { accountId: staff.accountId, userId: staff.userId, credential: { kind: 'api_key', id: staff.keyId }, channel: 'api', staff: true, scopes: ['read', 'write'], request: null };
    await expect(h.services.onboarding.createAccount(byKey, { account: 'K', email: 'key@example.test' })).rejects.toBeInstanceOf(AppError);
    await expect(h.services.onboarding.addSite({ ...byKey, credential: { kind: 'mcp_grant', id: 1 }, channel: 'mcp' }, customer.accountId, { name: 'M', website_url: 'https://m.example', language: '' })).rejects.toMatchObject({ code: 'forbidden' });
  });
});

describe('a fresh database', () => {
  let h: Harness;
  let smtp: Inbox;

  beforeAll(async () => {
    smtp = await startInbox();
    h = await startHarness({ env: { SMTP_URL: smtp.url, REPORT_MAIL_FROM: 'Anchorage <hello@anchorage.test>' } });
  });

  afterAll(async () => {
    await h?.close();
    await smtp?.close();
  });

  it('the sign-in page says how to create the first staff user, until there is one', async () => {
    const page = await new InjectBrowser(h.app).get('/app/sign-in');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-first-user');
    expect(decodeEntities(page.body)).toContain('anchorage user create --email you@example.com --password "a long password" --staff');
    await createCustomer(h.services, { staff: true });
    expect((await new InjectBrowser(h.app).get('/app/sign-in')).body).not.toContain('data-first-user');
  });

  it('with SMTP_URL the link is also sent by e-mail', async () => {
    const staff = await createCustomer(h.services, { staff: true });
    const browser = new InjectBrowser(h.app);
    await browser.signIn(staff.email);
    const csrf = csrfOf((await browser.get('/app/staff')).body);
    const created = await browser.post('/app/staff/accounts', { _csrf: csrf, account: 'Mailed', email: 'mailed@example.test' });
    const page = await browser.get(created.headers.location as string);
    const link = linkOn(page.body)!;
    expect(decodeEntities(page.body).replace(/<[^>]+>/g, '')).toContain('The link was also sent to mailed@example.test');
    expect(smtp.messages).toHaveLength(1);
    expect(smtp.messages[0]!.to).toEqual(['mailed@example.test']);
    expect(smtp.messages[0]!.raw).toContain('From: Anchorage <hello@anchorage.test>');
    expect(smtp.messages[0]!.raw.replace(/=\r\n/g, '')).toContain(link);
  });
});
