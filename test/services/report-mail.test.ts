import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportMailJob } from '../../src/services/report-mail.js';
import { loadMonthlyReport } from '../../src/web/report-data.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, TestClock, useHarness } from '../helpers/harness.js';
import { type Inbox, startInbox } from '../helpers/smtp.js';
import { csrfOf, InjectBrowser } from '../web/browser.js';

describe('monthly report e-mail', () => {
  // The inbox starts before the harness and closes after it.
  let smtp: Inbox;
  beforeAll(async () => {
    smtp = await startInbox();
  });
  afterAll(async () => {
    await smtp?.close();
  });
  const h = useHarness({ clock: new TestClock(new Date('2026-11-20T12:00:00Z')) });
  let siteId: number;
  let browser: InjectBrowser;
  let aliceEmail: string;

  const job = () =>
    new ReportMailJob(
      h.services.db,
      h.clock,
      { smtpUrl: smtp.url, from: 'Anchorage <reports@anchorage.test>', publicUrl: h.settings.publicUrl },
      (actor, site, month) => loadMonthlyReport(h.services, actor, site, month),
      (accountId, report) => h.services.htmlPool.renderReportPdf(accountId, report),
    );

  beforeAll(async () => {
    const alice = await createCustomer(h.services);
    aliceEmail = alice.email;
    siteId = (
      await seedSite(h.services, alice.email, {
        name: 'Mail Bakery',
        articles: [
          { status: 'published', title: 'November one', published_at: '2026-11-03T09:00:00Z' },
          { status: 'published', title: 'November two', published_at: '2026-11-04T09:00:00Z' },
          { status: 'published', title: 'October one', published_at: '2026-10-04T09:00:00Z' },
        ],
        backlinks: [
          { category: 'industry', acquired_at: '2026-11-04T09:00:00Z', anchor_text: 'MAIL-ANCHOR' },
          { category: 'local', acquired_at: '2026-10-04T09:00:00Z' },
        ],
      })
    ).siteId;
  });

  /** A fresh sign-in: the test clock moves past a session's life. */
  async function signedIn(): Promise<InjectBrowser> {
    browser = new InjectBrowser(h.app);
    await browser.signIn(aliceEmail);
    return browser;
  }

  async function subscribe(address: string) {
    await signedIn();
    const form = await browser.get(`/app/sites/${siteId}/shares`);
    return browser.post(`/app/sites/${siteId}/subscriptions`, { _csrf: csrfOf(form.body), address });
  }

  it('subscribes addresses in the UI, refusing bad ones, and says e-mail is off without SMTP_URL', async () => {
    expect((await subscribe('client@example.com')).statusCode).toBe(303);
    expect((await subscribe('Boss@Example.com')).statusCode).toBe(303);
    for (const [address, message] of [
      ['not an address', 'Give one e-mail address'],
      ['a@b.example, c@d.example', 'Give one e-mail address'],
      ['client@example.com', 'already receives this report'],
    ] as const) {
      const refused = await subscribe(address);
      expect(refused.statusCode).toBe(422);
      expect(refused.body).toContain(message);
    }
    await signedIn();
    const page = await browser.get(`/app/sites/${siteId}/shares`);
    expect(page.body).toContain('boss@example.com');
    expect(page.body).toContain('E-mail is off on this server');
    expect(await h.services.db.kysely.selectFrom('report_subscriptions').select('address').execute()).toHaveLength(2);
  });

  it('sends the month before on the 1st, once, with the summary, the PDF and a one-click unsubscribe', async () => {
    h.clock.set('2026-12-01T00:30:00Z');
    await subscribe('late@example.com'); // subscribed in December: gets December's report, not November's
    expect(await job().runOnce()).toBe(2);
    expect(smtp.messages.map((m) => m.to[0]).sort()).toEqual(['boss@example.com', 'client@example.com']);
    const mail = smtp.messages.find((m) => m.to[0] === 'client@example.com')!.raw;
    expect(mail).toContain('Subject: Mail Bakery: monthly report for November 2026');
    expect(mail).toContain('Articles published: 2 (+1, +100%)');
    expect(mail).toContain('Industry backlinks: 1 (+1)');
    expect(mail).toContain('Local backlinks: 0 (-1, -100%)');
    expect(mail).toContain('Content-Type: application/pdf; name=report-2026-11.pdf');
    expect(mail).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    const unsubscribeUrl = /List-Unsubscribe:\s*<([^>]+)>/.exec(mail)![1]!;
    expect(unsubscribeUrl.startsWith(`${h.settings.publicUrl}/unsubscribe/ru_`)).toBe(true);

    // A second run, a restarted node and two nodes at once send nothing more.
    expect(await job().runOnce()).toBe(0);
    expect((await Promise.all([job().runOnce(), job().runOnce()])).reduce((a, b) => a + b, 0)).toBe(0);
    expect(smtp.messages).toHaveLength(2);

    const path = new URL(unsubscribeUrl).pathname;
    const confirm = await h.app.inject({ method: 'GET', url: path });
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Stop the monthly report?');
    const oneClick = await h.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });
    expect(oneClick.statusCode).toBe(200);
    expect(oneClick.body).toContain('client@example.com no longer receives this monthly report');
    expect((await h.app.inject({ method: 'POST', url: path })).statusCode).toBe(404);
    expect((await h.app.inject({ method: 'GET', url: '/unsubscribe/ru_nothing' })).statusCode).toBe(404);
  });

  it('sends the next month to the addresses still subscribed, two nodes racing sending each once', async () => {
    h.clock.set('2027-01-01T03:00:00Z');
    const [a, b] = await Promise.all([job().runOnce(), job().runOnce()]);
    expect(a + b).toBe(2);
    const january = smtp.messages.slice(2);
    expect(january.map((m) => m.to[0]).sort()).toEqual(['boss@example.com', 'late@example.com']);
    expect(january[0]!.raw).toContain('monthly report for December 2026');
  });

  it('keeps a site name with line breaks on one line: at import, and in an e-mail of a name stored before', async () => {
    h.clock.set('2027-01-05T10:00:00Z');
    const hostile = 'Evil\r\nBcc: v@x.test\u2028\r\n\r\nInjected';
    const imported = (await seedSite(h.services, aliceEmail, { name: hostile })).siteId;
    const stored = await h.services.db.kysely.selectFrom('sites').select('name').where('id', '=', imported).executeTakeFirstOrThrow();
    expect(stored.name).toBe('Evil Bcc: v@x.test Injected');
    // As a name imported before this rule was stored.
    await h.services.db.kysely.updateTable('sites').set({ name: 'Evil\r\nBcc: v@x.test' }).where('id', '=', imported).execute();
    await signedIn();
    const form = await browser.get(`/app/sites/${imported}/shares`);
    expect((await browser.post(`/app/sites/${imported}/subscriptions`, { _csrf: csrfOf(form.body), address: 'evil-report@example.com' })).statusCode).toBe(303);

    h.clock.set('2027-02-01T01:00:00Z');
    const before = smtp.messages.length;
    await job().runOnce();
    const sent = smtp.messages.slice(before);
    expect(sent.flatMap((m) => m.to)).not.toContain('v@x.test');
    const mail = sent.find((m) => m.to[0] === 'evil-report@example.com')!.raw;
    expect(mail).toContain('Subject: Evil Bcc: v@x.test: monthly report for January 2027');
    expect(mail).toContain('Monthly report for Evil Bcc: v@x.test: January 2027');
    expect(mail).not.toMatch(/^Bcc:/im);
  });
});
