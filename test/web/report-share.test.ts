import { beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/core/secrets.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness, TestClock } from '../helpers/harness.js';
import { csrfOf, decodeEntities, InjectBrowser } from './browser.js';

type Customer = Awaited<ReturnType<typeof createCustomer>>;

describe('report share links', () => {
  const h = useHarness({ clock: new TestClock(new Date('2026-12-15T12:00:00Z')) });
  let alice: Customer;
  let bob: Customer;
  let aliceSite: number;
  let aliceOther: number;
  let bobSite: number;
  let browser: InjectBrowser;

  beforeAll(async () => {
    alice = await createCustomer(h.services);
    bob = await createCustomer(h.services);
    aliceSite = (
      await seedSite(h.services, alice.email, {
        name: 'Shared Bakery',
        website_url: 'https://bakery.example',
        articles: [
          { status: 'published', title: 'November bread guide', published_at: '2026-11-03T09:00:00Z', target_keyword: 'bread' },
          { status: 'published', title: 'October cake guide', published_at: '2026-10-03T09:00:00Z' },
          { status: 'draft', title: 'Secret draft', published_at: null },
        ],
        backlinks: [
          { category: 'industry', acquired_at: '2026-11-04T09:00:00Z', source_domain: 'flour.example', source_url: 'https://flour.example/a', target_url: 'https://bakery.example/', anchor_text: 'best flour bakery' },
          { category: 'local', acquired_at: '2026-11-05T09:00:00Z', source_domain: 'town.example', source_url: 'https://town.example/b', target_url: 'https://bakery.example/shop', anchor_text: 'town bakery' },
        ],
      })
    ).siteId;
    aliceOther = (await seedSite(h.services, alice.email, { name: 'Alice Second Site', articles: [{ status: 'published', title: 'Second site article', published_at: '2026-11-03T09:00:00Z' }] })).siteId;
    bobSite = (await seedSite(h.services, bob.email, { name: 'Bob Garage', articles: [{ status: 'published', title: 'Bob article', published_at: '2026-11-03T09:00:00Z' }] })).siteId;
    browser = new InjectBrowser(h.app);
    await browser.signIn(alice.email);
  });

  /** Creates a link through the UI (POST-redirect-GET) and returns its token and id. */
  async function createLink(name: string, days = '30'): Promise<{ token: string; id: number; url: string }> {
    const form = await browser.get(`/app/sites/${aliceSite}/shares`);
    const posted = await browser.post(`/app/sites/${aliceSite}/shares`, { _csrf: csrfOf(form.body), name, days });
    expect(posted.statusCode).toBe(303);
    const location = String(posted.headers.location);
    const id = Number(/created=(\d+)/.exec(location)![1]);
    const shown = await browser.get(location);
    const url = decodeEntities(/id="new-share"[^>]*value="([^"]+)"/.exec(shown.body)![1]!);
    const token = /\/share\/(rs_[0-9A-Za-z]{40})$/.exec(url)![1]!;
    return { token, id, url };
  }

  const anonymous = (url: string) => h.app.inject({ method: 'GET', url });

  it('creates a link from the report page, shows it once and keeps only its hash', async () => {
    const report = await browser.get(`/app/sites/${aliceSite}?month=2026-11`);
    expect(report.body).toContain(`href="/app/sites/${aliceSite}/shares"`);
    const { token, id, url } = await createLink('For the client');
    expect(url).toBe(`${h.settings.publicUrl}/share/${token}`);
    const again = await browser.get(`/app/sites/${aliceSite}/shares?created=${id}`);
    expect(again.body).not.toContain(token);
    expect(again.body).toContain('shown once');
    const row = await h.services.db.kysely.selectFrom('report_shares').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256(token));
    expect(JSON.stringify(row)).not.toContain(token);
    expect(row.expires_at).toBe('2027-01-14T12:00:00Z');
    const list = await browser.get(`/app/sites/${aliceSite}/shares`);
    expect(list.body).toContain('For the client');
    expect(list.body).not.toContain(token);
  });

  it('opens the report alone for someone without an account, and logs the opening without the token', async () => {
    const { token, id } = await createLink('Opened');
    const response = await anonymous(`/share/${token}?month=2026-11`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-robots-tag']).toContain('noindex');
    expect(response.headers['set-cookie']).toBeUndefined();
    const page = response.body;
    for (const text of ['Shared Bakery', 'November bread guide', 'best flour bakery', 'town bakery', 'data-stat-value="articles_published">1<', 'data-stat-value="backlinks_acquired">2<']) {
      expect(page).toContain(text);
    }
    expect(page).not.toContain('October cake guide');
    expect(page).not.toContain('Secret draft');
    expect(page).not.toContain('aria-label="Main"');
    expect(page).not.toMatch(/href="\/app/);
    expect(page).not.toContain('Alice Second Site');
    await h.services.activity.flush();
    const log = await h.services.activity.list(alice.accountId, {}, { page: 1, per_page: 50 });
    const opened = log.data.filter((r) => r.operation === 'openReportShare');
    expect(opened).toHaveLength(1);
    expect(opened[0]!.path).toBe(`/share/[link ${id}]/2026-11`);
    expect(JSON.stringify(log.data)).not.toContain(token);
    const bobLog = await h.services.activity.list(bob.accountId, {}, { page: 1, per_page: 50 });
    expect(bobLog.data.filter((r) => r.operation === 'openReportShare')).toHaveLength(0);
    const list = await browser.get(`/app/sites/${aliceSite}/shares`);
    expect(list.body).toMatch(new RegExp(`data-share-id="${id}"[\\s\\S]*?2026-12-15 12:00`));
  });

  it('shows other months of that site only, never a month ahead or another site', async () => {
    const { token } = await createLink('Months');
    const october = await anonymous(`/share/${token}?month=2026-10`);
    expect(october.body).toContain('October cake guide');
    expect(october.body).not.toContain('November bread guide');
    const future = await anonymous(`/share/${token}?month=2027-05`);
    expect(future.statusCode).toBe(422);
    expect(future.body).toContain('May 2027 has not begun yet');
    expect(future.body).toContain(`<a class="button" href="/share/${token}">Show December 2026 so far</a>`);
    expect(future.body).not.toContain('rel="next"');
    for (const url of [`/share/${token}?site=${bobSite}&month=2026-11`, `/share/${token}?month=2026-11&site_id=${aliceOther}`]) {
      const response = await anonymous(url);
      expect(response.body).toContain('Shared Bakery');
      expect(response.body).not.toContain('Bob article');
      expect(response.body).not.toContain('Second site article');
    }
    expect((await anonymous(`/share/${token}/../../app/sites/${bobSite}`)).statusCode).not.toBe(200);
  });

  it('answers 404 for an unknown or malformed token and 410 for a revoked or expired one', async () => {
    for (const url of ['/share/rs_' + 'A'.repeat(40), '/share/nonsense', `/share/rs_${'x'.repeat(80)}`]) {
      const response = await anonymous(url);
      expect(response.statusCode).toBe(404);
      expect(response.body).toContain('No such report link');
      expect(response.body).not.toContain('aria-label="Main"');
    }
    const { token, id } = await createLink('To revoke');
    const list = await browser.get(`/app/sites/${aliceSite}/shares`);
    const revoked = await browser.post(`/app/sites/${aliceSite}/shares/${id}/revoke`, { _csrf: csrfOf(list.body) });
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe(`/app/sites/${aliceSite}/shares?revoked=1`);
    const gone = await anonymous(`/share/${token}`);
    expect(gone.statusCode).toBe(410);
    expect(gone.body).toContain('This report link was revoked');
    expect(gone.body).not.toContain('Shared Bakery');

    const short = await createLink('One day', '1');
    expect((await anonymous(`/share/${short.token}`)).statusCode).toBe(200);
    h.clock.set('2026-12-16T12:00:01Z');
    try {
      const expired = await anonymous(`/share/${short.token}`);
      expect(expired.statusCode).toBe(410);
      expect(expired.body).toContain('This report link has expired');
    } finally {
      h.clock.set('2026-12-15T12:00:00Z');
    }
  });

  it('refuses a bad form and changes nothing', async () => {
    const count = async () => Number((await h.services.db.kysely.selectFrom('report_shares').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await count();
    const form = await browser.get(`/app/sites/${aliceSite}/shares`);
    for (const [fields, message] of [
      [{ name: '', days: '30' }, 'Give the link a name of 1 to 100 characters.'],
      [{ name: 'x'.repeat(101), days: '30' }, 'Give the link a name of 1 to 100 characters.'],
      [{ name: 'Zero', days: '0' }, 'A link is valid for 1 to 365 days.'],
      [{ name: 'Too long', days: '366' }, 'A link is valid for 1 to 365 days.'],
      [{ name: 'Odd', days: '1e3' }, 'A link is valid for 1 to 365 days.'],
    ] as const) {
      const response = await browser.post(`/app/sites/${aliceSite}/shares`, { _csrf: csrfOf(form.body), ...fields });
      expect(response.statusCode).toBe(422);
      expect(response.body).toContain(message);
    }
    const noCsrf = await browser.post(`/app/sites/${aliceSite}/shares`, { name: 'No token', days: '30' });
    expect(noCsrf.statusCode).toBe(403);
    expect(await count()).toBe(before);
  });

  it('keeps the account boundary: other accounts cannot see, create or revoke links, staff only look', async () => {
    const { token, id } = await createLink('Boundary');
    const bobBrowser = new InjectBrowser(h.app);
    await bobBrowser.signIn(bob.email);
    expect((await bobBrowser.get(`/app/sites/${aliceSite}/shares`)).statusCode).toBe(404);
    const bobForm = await bobBrowser.get(`/app/sites/${bobSite}/shares`);
    expect(bobForm.statusCode).toBe(200);
    expect(bobForm.body).not.toContain('Boundary');
    expect((await bobBrowser.post(`/app/sites/${aliceSite}/shares`, { _csrf: csrfOf(bobForm.body), name: 'Steal', days: '30' })).statusCode).toBe(404);
    const crossRevoke = await bobBrowser.post(`/app/sites/${bobSite}/shares/${id}/revoke`, { _csrf: csrfOf(bobForm.body) });
    expect(crossRevoke.headers.location).toBe(`/app/sites/${bobSite}/shares?revoked=0`);
    expect((await anonymous(`/share/${token}`)).statusCode).toBe(200);

    const staff = await createCustomer(h.services, { staff: true });
    const staffBrowser = new InjectBrowser(h.app);
    await staffBrowser.signIn(staff.email);
    const staffReport = await staffBrowser.get(`/app/sites/${aliceSite}`);
    expect(staffReport.statusCode).toBe(200);
    expect(staffReport.body).not.toContain(`/app/sites/${aliceSite}/shares`);
    expect((await staffBrowser.get(`/app/sites/${aliceSite}/shares`)).statusCode).toBe(403);

    expect((await anonymous(`/app/sites/${aliceSite}/shares`)).statusCode).toBe(303);
  });
});
