import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportLocale, reportLanguages } from '../../src/core/i18n/locale.js';
import { en } from '../../src/core/i18n/messages.js';
import { pdfText } from '../../src/services/report-pdf.js';
import { ReportMailJob } from '../../src/services/report-mail.js';
import { loadMonthlyReport } from '../../src/web/report-data.js';
import { type BacklinkFixture, seedSite } from '../helpers/fixtures.js';
import { createCustomer, type Harness, startHarness, TestClock } from '../helpers/harness.js';
import { type Inbox, startInbox } from '../helpers/smtp.js';
import { csrfOf, decodeEntities, InjectBrowser } from './browser.js';

const standardFontDataUrl = join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts/');

/** Intl's thin, narrow and no-break spaces as plain ones, so expectations read as text. */
const plain = (text: string): string => text.replace(/[\u00a0\u2009\u202f]/g, ' ');

/** The text of every page of a PDF, as a reader's text layer (pdf.js) gives it. */
async function pdfTextOf(bytes: Buffer): Promise<string> {
  const loading = getDocument({ data: new Uint8Array(bytes), standardFontDataUrl });
  const pdf = await loading.promise;
  const pages: string[] = [];
  for (let n = 1; n <= pdf.numPages; n += 1) {
    const content = await (await pdf.getPage(n)).getTextContent();
    pages.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
  }
  await loading.destroy();
  return plain(pages.join('\n'));
}

const csvRows = (text: string): string[][] => parse(text, { bom: true }) as string[][];

describe('report locale', () => {
  it('takes the language of the site, its region from the tag or the country, and English for any other', () => {
    const cases: [string | null, string | null, string, string][] = [
      ['de', null, 'de', 'de'],
      ['de', 'AT', 'de', 'de-AT'],
      ['DE_ch', 'DE', 'de', 'de-CH'],
      ['es', 'es', 'es', 'es-ES'],
      ['fr-CA', null, 'fr', 'fr-CA'],
      ['nl', 'BE', 'nl', 'nl-BE'],
      ['it', 'Italy', 'it', 'it'],
      ['en', 'GB', 'en', 'en-GB'],
      ['pt-BR', null, 'en', 'en-BR'],
      ['el', null, 'en', 'en'],
      [null, null, 'en', 'en'],
      ['', 'US', 'en', 'en-US'],
      ['xx-123', '1', 'en', 'en'],
    ];
    for (const [language, country, speaks, tag] of cases) {
      const locale = reportLocale({ language, country });
      expect([locale.language, locale.tag], `${language} ${country}`).toEqual([speaks, tag]);
    }
    expect(reportLanguages.sort()).toEqual(['de', 'en', 'es', 'fr', 'it', 'nl']);
  });

  it('writes months, days and numbers as each language does, in UTC whatever the machine’s zone', () => {
    const expected: Record<string, [string, string, string, string, string]> = {
      en: ['November 2026', 'Nov 2026', 'Nov 1, 2026', 'Nov 30, 2026', '12,345'],
      de: ['November 2026', 'Nov. 2026', '01.11.2026', '30.11.2026', '12.345'],
      es: ['noviembre de 2026', 'nov 2026', '1 nov 2026', '30 nov 2026', '12.345'],
      fr: ['novembre 2026', 'nov. 2026', '1 nov. 2026', '30 nov. 2026', '12 345'],
      nl: ['november 2026', 'nov 2026', '1 nov 2026', '30 nov 2026', '12.345'],
      it: ['novembre 2026', 'nov 2026', '1 nov 2026', '30 nov 2026', '12.345'],
    };
    for (const [language, [long, short, first, last, number]] of Object.entries(expected)) {
      const l = reportLocale({ language, country: null });
      // The first and last instants of the month: a local time zone would move one of them.
      expect([l.month('2026-11'), l.month('2026-11', true), l.day('2026-11-01T00:00:00Z'), l.day('2026-11-30T23:59:59Z'), l.number(12345)].map(plain), language).toEqual([
        long,
        short,
        first,
        last,
        number,
      ]);
    }
    expect(plain(reportLocale({ language: 'de', country: null }).days('2026-11-01', '2026-11-23'))).toBe('1.–23. Nov. 2026');
    expect(plain(reportLocale({ language: 'en', country: 'GB' }).day('2026-11-03'))).toBe('3 Nov 2026');
    expect(reportLocale({ language: 'de', country: null }).signed(-1234)).toBe('−1.234');
    expect(reportLocale({ language: 'de', country: null }).day('not a day')).toBe('not a day');
  });

  it('has every language’s own words, not English left in place', () => {
    for (const language of reportLanguages.filter((l) => l !== 'en')) {
      const { t } = reportLocale({ language, country: null });
      for (const [key, english] of [
        ['monthlyReport', en.monthlyReport],
        ['summary', en.summary],
        ['downloadPdf', en.downloadPdf],
        ['measures.backlinks_acquired', en.measures.backlinks_acquired],
        ['column.targetKeyword', en.column.targetKeyword],
        ['articleStatus.published', en.articleStatus.published],
        ['csv.backlinks.acquired_at', en.csv.backlinks.acquired_at],
        ['mail.attached', en.mail.attached],
      ] as const) {
        const value = key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], t);
        expect(value, `${language} ${key}`).not.toBe(english);
      }
      expect(t.articlesPublishedIn('X')).not.toBe(en.articlesPublishedIn('X'));
    }
  });

  it('prints Latin, Greek and Cyrillic in the PDF, and "?" only for what the font lacks', () => {
    expect(pdfText('Café “Ψωμί” – Хлеб 東京\tend')).toBe('Café “Ψωμί” – Хлеб ?? end');
    expect(pdfText('Größe ñ œ ő ệ Ω Ж Ա ა')).toBe('Größe ñ œ ő ệ Ω Ж Ա ა');
    expect(pdfText('a\u0007b')).toBe('a?b');
    expect(pdfText(null)).toBe('');
  });
});

// A report's first PDF starts a pool thread and loads pdfkit there: its tests get 60 s on a loaded machine.
describe('reports in the language of the site', () => {
  let h: Harness;
  let browser: InjectBrowser;
  let german: number;
  let spanish: number;
  let greek: number;
  const others: Record<string, number> = {};

  const backlinks = (prefix: string): BacklinkFixture[] => [
    { category: 'industry', status: 'live', anchor_type: 'exact', acquired_at: '2026-11-03T10:00:00Z', source_domain: `${prefix}-news.example`, source_url: `https://${prefix}-news.example/a`, target_url: 'https://site.example/', anchor_text: `${prefix} anchor` },
    { category: 'local', status: 'lost', anchor_type: 'branded', acquired_at: '2026-11-04T10:00:00Z', source_domain: `${prefix}-city.example`, source_url: `https://${prefix}-city.example/b`, target_url: 'https://site.example/shop', anchor_text: `${prefix} city` },
    { category: 'industry', acquired_at: '2026-10-31T10:00:00Z', source_domain: `${prefix}-october.example` },
  ];

  beforeAll(async () => {
    h = await startHarness({ clock: new TestClock(new Date('2026-12-15T12:00:00Z')) });
    const alice = await createCustomer(h.services);
    german = (
      await seedSite(h.services, alice.email, {
        name: 'Bäckerei Müller',
        language: 'de',
        country: 'DE',
        articles: [
          { status: 'published', title: 'Langer Artikel', published_at: '2026-11-03T09:00:00Z', target_keyword: 'brot', body: `<p>${'wort '.repeat(1234)}</p>` },
          ...Array.from({ length: 21 }, (_, i) => ({ status: 'published' as const, title: `Artikel ${i + 1}`, published_at: `2026-11-${String(i + 5).padStart(2, '0')}T09:00:00Z` })),
          { status: 'scheduled', title: 'Geplanter Artikel', published_at: '2026-11-28T09:00:00Z' },
        ],
        backlinks: backlinks('de'),
      })
    ).siteId;
    spanish = (
      await seedSite(h.services, alice.email, {
        name: 'Panadería Sol',
        language: 'es',
        country: 'ES',
        articles: [{ status: 'published', title: 'Pan de masa madre', published_at: '2026-11-03T09:00:00Z' }],
        backlinks: backlinks('es'),
      })
    ).siteId;
    greek = (
      await seedSite(h.services, alice.email, {
        name: 'Αρτοποιείο Κυρίλλου · Пекарня 東京',
        language: 'el',
        articles: [{ status: 'published', title: 'Ψωμί και хлеб', published_at: '2026-11-03T09:00:00Z', target_keyword: 'Καλαμάτα' }],
        backlinks: [{ category: 'local', acquired_at: '2026-11-04T10:00:00Z', anchor_text: 'Свежий хлеб' }],
      })
    ).siteId;
    for (const language of ['fr', 'nl', 'it']) {
      others[language] = (await seedSite(h.services, alice.email, { name: `Site ${language}`, language, articles: [{ status: 'published', title: 'One', published_at: '2026-11-03T09:00:00Z' }] })).siteId;
    }
    browser = new InjectBrowser(h.app);
    await browser.signIn(alice.email);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('shows the report page, and its print view, in German with German dates and numbers', async () => {
    const response = await browser.get(`/app/sites/${german}?month=2026-11`);
    expect(response.statusCode).toBe(200);
    const page = plain(decodeEntities(response.body));
    expect(page).toContain('<main id="main" tabindex="-1" lang="de">');
    expect(page).toContain('<title>Bäckerei Müller · November 2026 · Anchorage</title>');
    expect(page).toContain('<h2 id="summary-h">Übersicht <span class="muted thin small">1.–30. Nov. 2026</span></h2>');
    expect(page).toContain('Der ganze Monat, verglichen mit dem ganzen Oktober 2026.');
    expect(page).toMatch(/<dt>Veröffentlichte Artikel<\/dt>\s*<dd><span class="stat-value" data-stat-value="articles_published">22<\/span>/);
    expect(page).toContain('<span class="delta delta-up">+22</span> <span class="muted">vs. Okt. 2026 (0)</span>');
    expect(page).toContain('<h2 id="articles-h">Veröffentlichte Artikel im November 2026</h2>');
    expect(page).toContain('<h2 id="backlinks-h">Gewonnene Backlinks im November 2026</h2>');
    expect(page).toContain('<time datetime="2026-11-03T09:00:00Z">03.11.2026</time>');
    expect(page).toMatch(/<td class="num"[^>]*>1\.234<\/td>/);
    expect(page).toContain('<span class="badge badge-published">Veröffentlicht</span>');
    expect(page).toContain('<span class="badge badge-lost">Verloren</span>');
    expect(page.replaceAll('<wbr>', '')).toContain('/ (Startseite)');
    expect(page).toContain('<option value="scheduled">Geplant</option>');
    expect(page).toContain('Seite 1 von 2');
    expect(page).toContain('Weiter →');
    expect(page).toContain('PDF herunterladen');
    expect(page).toContain('CSV exportieren');
    // The printout holds every row, and says so.
    expect(page).toContain('Alle 22 Artikel.');
    const series = JSON.parse(decodeEntities(/data-series="([^"]+)"/.exec(response.body)![1]!)) as { labels: string[]; legend: Record<string, string>; locale: string };
    expect(series.labels.at(-1)).toBe('Nov. 2026');
    expect(series.legend).toEqual({ industry: 'Branche', local: 'Lokal', articles: 'Veröffentlichte Artikel' });
    expect(series.locale).toBe('de-DE');
    for (const english of ['Articles published', 'Backlinks acquired', 'Summary', 'Download PDF', 'Page 1 of 2']) expect(page).not.toContain(english);

    const filtered = plain(decodeEntities((await browser.get(`/app/sites/${german}?month=2026-11&status=scheduled`)).body));
    expect(filtered).toContain('<h2 id="articles-h">Artikel mit Status „Geplant“ und Datum im November 2026</h2>');
    const empty = plain(decodeEntities((await browser.get(`/app/sites/${german}?month=2025-03`)).body));
    expect(empty).toContain('Im März 2025 wurden keine Artikel veröffentlicht.');
    expect(empty).toContain('Im März 2025 wurden keine Backlinks gewonnen.');
  });

  it('speaks French, Dutch and Italian too', async () => {
    const words: Record<string, string[]> = {
      fr: ['Articles publiés en novembre 2026', 'Résumé', 'Télécharger le PDF', '3 nov. 2026'],
      nl: ['Artikelen gepubliceerd in november 2026', 'Samenvatting', 'PDF downloaden', '3 nov 2026'],
      it: ['Articoli pubblicati nel mese di novembre 2026', 'Riepilogo', 'Scarica PDF', '3 nov 2026'],
    };
    for (const [language, expected] of Object.entries(words)) {
      const page = plain(decodeEntities((await browser.get(`/app/sites/${others[language]}?month=2026-11`)).body));
      expect(page).toContain(`lang="${language}"`);
      for (const text of expected) expect(page, language).toContain(text);
    }
  });

  it('heads the CSV exports in Spanish, and keeps the API’s names for English', async () => {
    const links = csvRows((await browser.get(`/app/sites/${spanish}/backlinks.csv?month=2026-11`)).body);
    expect(links[0]).toEqual(['ID', 'Fecha de obtención', 'Dominio de origen', 'URL de origen', 'URL de destino', 'Texto ancla', 'Tipo de ancla', 'Estado', 'Categoría']);
    // The cells stay the API's values, for spreadsheets and scripts.
    expect(links.slice(1).map((row) => row[1]).sort()).toEqual(['2026-11-03T10:00:00Z', '2026-11-04T10:00:00Z']);
    const articles = csvRows((await browser.get(`/app/sites/${spanish}/articles.csv?month=2026-11`)).body);
    expect(articles[0]).toEqual(['ID', 'Título', 'Estado', 'Fecha de publicación', 'Palabra clave objetivo', 'Palabras', 'URL']);
    const english = csvRows((await browser.get(`/app/sites/${greek}/articles.csv?month=2026-11`)).body);
    expect(english[0]).toEqual(['id', 'title', 'status', 'published_at', 'target_keyword', 'word_count', 'url']);
    expect(english[1]![1]).toBe('Ψωμί και хлеб');
  });

  it('shows a share link’s page in Spanish', async () => {
    const form = await browser.get(`/app/sites/${spanish}/shares`);
    const posted = await browser.post(`/app/sites/${spanish}/shares`, { _csrf: csrfOf(form.body), name: 'Cliente', days: '30' });
    const shown = await browser.get(String(posted.headers.location));
    const token = /\/share\/(rs_[0-9A-Za-z]{40})/.exec(shown.body)![1]!;
    const response = await h.app.inject({ method: 'GET', url: `/share/${token}?month=2026-11` });
    expect(response.statusCode).toBe(200);
    const page = plain(decodeEntities(response.body));
    expect(page).toContain('<main id="main" tabindex="-1" lang="es">');
    expect(page).toContain('<p class="eyebrow">Informe mensual</p>');
    expect(page).toContain('<h1>Panadería Sol <span class="muted thin">· noviembre de 2026</span></h1>');
    expect(page).toContain('<h2 id="articles-h">Artículos publicados en noviembre de 2026</h2>');
    expect(page).toContain('<h2 id="backlinks-h">Backlinks conseguidos en noviembre de 2026</h2>');
    expect(page).toContain('<time datetime="2026-11-03T09:00:00Z">3 nov 2026</time>');
    expect(page).toContain('Descargar PDF');
    expect(page).toContain('<span class="badge badge-industry">sector</span>');
    expect(page).not.toContain('Monthly report');
  });

  it('draws the PDF in German and in Spanish', async () => {
    const de = await pdfTextOf((await browser.get(`/app/sites/${german}/report.pdf?month=2026-11`)).rawPayload);
    for (const text of [
      'Monatsbericht',
      'Bäckerei Müller · November 2026',
      '1.–30. Nov. 2026, verglichen mit 1.–31. Okt. 2026. Erstellt am 15.12.2026.',
      'Übersicht: November 2026',
      'Veröffentlichte Artikel pro Monat',
      'Veröffentlichte Artikel im November 2026 (22)',
      'Gewonnene Backlinks im November 2026 (2)',
      '03.11.2026',
      '1.234',
      'Zielseite',
      'Verloren',
    ])
      expect(de, text).toContain(text);
    expect(de).toMatch(/Gewonnene Backlinks\s+2\s+1\s+\+1 \(\+100 %\)/);
    for (const english of ['Monthly report', 'Articles published', 'Backlinks acquired']) expect(de).not.toContain(english);

    const es = await pdfTextOf((await browser.get(`/app/sites/${spanish}/report.pdf?month=2026-11`)).rawPayload);
    for (const text of ['Informe mensual', 'Resumen: noviembre de 2026', 'Artículos publicados en noviembre de 2026 (1)', 'Backlinks conseguidos en noviembre de 2026 (2)', '3 nov 2026', 'Texto ancla'])
      expect(es, text).toContain(text);
  }, 60_000);

  it('prints Greek and Cyrillic content in the PDF, not "?", with English words for a language without a catalogue', async () => {
    const text = await pdfTextOf((await browser.get(`/app/sites/${greek}/report.pdf?month=2026-11`)).rawPayload);
    expect(text).toContain('Αρτοποιείο Κυρίλλου · Пекарня ??');
    expect(text).toContain('Ψωμί και хлеб');
    expect(text).toContain('Καλαμάτα');
    expect(text).toContain('Свежий хлеб');
    expect(text).toContain('Monthly report');
    expect(text).toContain('Articles published in November 2026 (1)');
  }, 60_000);
});

/** The decoded subject and text of a raw MIME message as nodemailer writes it (encoded words; quoted-printable or base64). */
function readMail(raw: string): { subject: string; text: string; headers: string } {
  const [headers] = raw.split(/\r?\n\r?\n/, 1) as [string];
  const unfolded = headers.replace(/\r?\n[ \t]+/g, ' ');
  const words = /^Subject: (.*)$/m.exec(unfolded)![1]!;
  const subject = words.replace(/=\?utf-8\?([QB])\?([^?]*)\?=\s*/gi, (_, kind: string, data: string) =>
    kind.toUpperCase() === 'B' ? Buffer.from(data, 'base64').toString('utf8') : qp(data.replace(/_/g, ' ')),
  );
  const part = /Content-Type: text\/plain[^\r\n]*\r?\nContent-Transfer-Encoding: ([\w-]+)\r?\n\r?\n([\s\S]*?)\r?\n--/i.exec(raw)!;
  const text = part[1]!.toLowerCase() === 'base64' ? Buffer.from(part[2]!.replace(/\s/g, ''), 'base64').toString('utf8') : qp(part[2]!.replace(/=\r?\n/g, ''));
  return { subject, text: text.replace(/\r\n/g, '\n'), headers: unfolded };
}

const qp = (text: string): string => Buffer.from(text.replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');

describe('the monthly e-mail in the language of the site', () => {
  let h: Harness;
  let smtp: Inbox;

  beforeAll(async () => {
    smtp = await startInbox();
    h = await startHarness({ clock: new TestClock(new Date('2026-11-20T12:00:00Z')) });
  });

  afterAll(async () => {
    await h?.close();
    await smtp?.close();
  });

  it('sends a German site’s report in German, with German numbers', async () => {
    const alice = await createCustomer(h.services);
    const { siteId } = await seedSite(h.services, alice.email, {
      name: 'Bäckerei Müller',
      language: 'de',
      articles: [
        { status: 'published', title: 'Eins', published_at: '2026-11-03T09:00:00Z' },
        { status: 'published', title: 'Zwei', published_at: '2026-11-04T09:00:00Z' },
        { status: 'published', title: 'Oktober', published_at: '2026-10-04T09:00:00Z' },
      ],
      backlinks: [{ category: 'local', acquired_at: '2026-10-04T09:00:00Z' }],
    });
    const site = await h.services.sites.visible({ accountId: alice.accountId, userId: alice.userId, credential: { kind: 'operator' }, channel: 'editor', staff: false, scopes: ['read'], request: null }, siteId);
    await h.services.reportSubscriptions.subscribe(site, alice.userId, 'kunde@example.com');
    h.clock.set('2026-12-01T06:00:00Z');
    const job = new ReportMailJob(
      h.services.db,
      h.clock,
      { smtpUrl: smtp.url, from: 'Anchorage <reports@anchorage.test>', publicUrl: h.settings.publicUrl },
      (actor, row, month) => loadMonthlyReport(h.services, actor, row, month),
      (accountId, report) => h.services.htmlPool.renderReportPdf(accountId, report),
    );
    expect(await job.runOnce()).toBe(1);
    const mail = readMail(smtp.messages[0]!.raw);
    expect(mail.subject).toBe('Bäckerei Müller: Monatsbericht für November 2026');
    expect(mail.headers).toContain('Content-Language: de');
    const text = plain(mail.text);
    expect(text).toContain('Monatsbericht für Bäckerei Müller: November 2026\n\nIm Vergleich zu Oktober 2026:\n');
    expect(text).toContain('Veröffentlichte Artikel: 2 (+1, +100 %)');
    expect(text).toContain('Gewonnene Backlinks: 0 (-1, -100 %)');
    expect(text).toContain('Lokale Backlinks: 0 (-1, -100 %)');
    expect(text).toContain('Branchen-Backlinks: 0 (±0)');
    expect(text).toContain('Der vollständige Bericht mit allen Artikeln und Backlinks ist als PDF angehängt.');
    expect(text).toMatch(/Diesen Bericht abbestellen: http\S+\/unsubscribe\/ru_/);
    expect(text).not.toContain('Monthly report');
  }, 60_000);
});
