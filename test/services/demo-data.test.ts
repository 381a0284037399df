import { Parser } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { demoDataSet, type ImportArticle, type ImportSite } from '../../src/demo/data.js';

const now = new Date('2026-10-14T10:23:45.678Z');
const data = demoDataSet(now, 'http://localhost:3000');
const sites = data.file.sites;
const articles = sites.flatMap((s) => s.articles);
const backlinks = sites.flatMap((s) => s.backlinks);

const timestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const dayMs = 86_400_000;

const allowedAttributes: Record<string, readonly string[]> = {
  p: [], h2: [], h3: [], h4: [], h5: [], h6: [], ul: [], ol: [], li: [], strong: [], em: [], b: [], i: [], u: [], s: [],
  sub: [], sup: [], blockquote: [], code: [], pre: [], br: [], hr: [], figure: [], figcaption: [], table: [], thead: [],
  tbody: [], tr: [], span: [],
  a: ['href', 'title', 'rel', 'target', 'data-service-protected'],
  img: ['src', 'alt', 'title', 'width', 'height', 'loading'],
  th: ['colspan', 'rowspan'],
  td: ['colspan', 'rowspan'],
};

interface Anchor {
  attributes: Record<string, string>;
  text: string;
}

interface Parsed {
  tags: string[];
  problems: string[];
  anchors: Anchor[];
  images: Record<string, string>[];
}

function parse(html: string): Parsed {
  const parsed: Parsed = { tags: [], problems: [], anchors: [], images: [] };
  let open: Anchor | null = null;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        parsed.tags.push(name);
        const allowed = allowedAttributes[name];
        if (!allowed) parsed.problems.push(`tag <${name}>`);
        for (const attribute of Object.keys(attributes)) {
          if (allowed && !allowed.includes(attribute)) parsed.problems.push(`${name}[${attribute}]`);
        }
        if (name === 'a') open = { attributes, text: '' };
        if (name === 'img') parsed.images.push(attributes);
      },
      ontext(text) {
        if (open) open.text += text;
      },
      onclosetag(name) {
        if (name === 'a' && open) {
          parsed.anchors.push(open);
          open = null;
        }
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return parsed;
}

const protectedOf = (parsed: Parsed, type: 'backlink' | 'internal'): Anchor[] =>
  parsed.anchors.filter((a) => a.attributes['data-service-protected'] === type);

const hostOf = (url: string): string => new URL(url).hostname;
const monthOf = (date: Date, offset: number): string =>
  new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + offset, 1)).toISOString().slice(0, 7);

function checkDates(site: ImportSite, at: Date): void {
  const nowMs = at.getTime();
  for (const article of site.articles) {
    if (article.status === 'draft') {
      expect(article.published_at).toBeNull();
      continue;
    }
    expect(article.published_at).toMatch(timestamp);
    const published = Date.parse(article.published_at ?? '');
    if (article.status === 'scheduled') {
      expect(published).toBeGreaterThan(nowMs);
      expect(published).toBeLessThanOrEqual(nowMs + 30 * dayMs);
    } else {
      expect(published).toBeLessThanOrEqual(nowMs);
      expect(published).toBeGreaterThanOrEqual(nowMs - 550 * dayMs);
    }
  }
  for (const backlink of site.backlinks) {
    expect(backlink.acquired_at).toMatch(timestamp);
    const acquired = Date.parse(backlink.acquired_at);
    expect(acquired).toBeLessThanOrEqual(nowMs);
    expect(acquired).toBeGreaterThanOrEqual(nowMs - 550 * dayMs);
  }
  const publishedIn = (month: string): ImportArticle[] =>
    site.articles.filter((a) => a.status === 'published' && a.published_at?.startsWith(month));
  expect(publishedIn(monthOf(at, 0)).length).toBeGreaterThanOrEqual(1);
  expect(publishedIn(monthOf(at, -1)).length).toBeGreaterThanOrEqual(2);
  expect(site.backlinks.filter((b) => b.acquired_at.startsWith(monthOf(at, 0))).length).toBeGreaterThanOrEqual(1);
}

describe('demo data set', () => {
  it('has the main demo user first, several customers and one staff user', () => {
    const [main] = data.users;
    expect(main).toMatchObject({ email: 'demo@anchorage.test', password: 'demo-password-2026', staff: false });
    const customers = data.users.filter((u) => !u.staff);
    expect(customers.length).toBeGreaterThanOrEqual(3);
    expect(new Set(customers.map((u) => u.account)).size).toBe(customers.length);
    expect(customers.map((u) => u.email)).toContain('olivia@brightsmile.test');
    for (const customer of customers) expect(sites.some((s) => s.owner === customer.email)).toBe(true);

    const staff = data.users.filter((u) => u.staff);
    expect(staff).toEqual([expect.objectContaining({ email: 'staff@anchorage.test', account: 'Anchorage staff' })]);
    expect(sites.some((s) => s.owner === 'staff@anchorage.test')).toBe(false);
    expect(new Set(data.users.map((u) => u.email)).size).toBe(data.users.length);
  });

  it('has 10+ sites across industries, countries and languages; 3+ for the main account', () => {
    expect(sites.length).toBeGreaterThanOrEqual(10);
    expect(sites.filter((s) => s.owner === 'demo@anchorage.test').length).toBeGreaterThanOrEqual(3);
    for (const site of sites) {
      expect(['local', 'regional', 'national', 'international']).toContain(site.geographic_scope);
      expect(site.website_url).toMatch(/^https:\/\/[a-z0-9.-]+$/);
      expect(data.users.map((u) => u.email)).toContain(site.owner);
    }
    expect(new Set(sites.map((s) => s.website_url)).size).toBe(sites.length);
    expect(new Set(sites.map((s) => s.industry)).size).toBeGreaterThanOrEqual(6);
    const pairs = new Set(sites.map((s) => `${s.country}/${s.language}`));
    for (const pair of ['US/en', 'DE/de', 'GB/en', 'AU/en', 'ES/es']) expect(pairs).toContain(pair);
  });

  it('has at least 500 articles and 2,000 backlinks', () => {
    expect(articles.length).toBeGreaterThanOrEqual(500);
    expect(backlinks.length).toBeGreaterThanOrEqual(2000);
  });

  it('is deterministic for the same now', () => {
    expect(JSON.stringify(demoDataSet(new Date(now.getTime()), 'http://localhost:3000'))).toBe(JSON.stringify(data));
  });

  it('dates every article and backlink correctly', () => {
    for (const site of sites) checkDates(site, now);
  });

  it('keeps its dates valid at the first second of a month', () => {
    const edge = new Date('2027-01-01T00:00:00Z');
    for (const site of demoDataSet(edge, 'http://localhost:3000').file.sites) checkDates(site, edge);
  });

  it('mixes article statuses, mostly published', () => {
    const count = (status: ImportArticle['status']): number => articles.filter((a) => a.status === status).length;
    expect(count('published') / articles.length).toBeGreaterThan(0.75);
    for (const status of ['draft', 'scheduled', 'archived'] as const) expect(count(status)).toBeGreaterThan(0);
  });

  it('gives every article a unique blog url on its site, a keyword and a short meta description', () => {
    for (const site of sites) {
      const urls = site.articles.map((a) => a.url);
      expect(new Set(urls).size).toBe(urls.length);
      for (const article of site.articles) {
        expect(article.url).toMatch(new RegExp(`^${site.website_url.replace(/\./g, '\\.')}/blog/[a-z0-9]+(-[a-z0-9]+)*$`));
        expect(article.title.length).toBeGreaterThan(0);
        expect([...article.title].length).toBeLessThanOrEqual(255);
        expect(article.target_keyword.length).toBeGreaterThan(0);
        expect(article.meta_description.length).toBeGreaterThan(0);
        expect([...article.meta_description].length).toBeLessThanOrEqual(160);
        if (article.featured_image_url !== null) expect(article.featured_image_url).toMatch(/^http:\/\/localhost:3000\/assets\/demo\/[a-z]+-[12]\.webp$/);
      }
    }
    expect(new Set(articles.map((a) => a.title)).size).toBeGreaterThan(articles.length / 2);
  });

  it('writes bodies with only allowed tags and attributes', () => {
    const seen = new Set<string>();
    for (const article of articles) {
      const parsed = parse(article.body);
      expect(parsed.problems, article.url).toEqual([]);
      for (const tag of parsed.tags) seen.add(tag);
      expect(parsed.tags).toContain('h2');
      expect(parsed.tags).toContain('p');
      expect(parsed.images.length).toBeGreaterThanOrEqual(1);
      for (const image of parsed.images) {
        expect(image.src).toMatch(/^http:\/\/localhost:3000\/assets\/demo\/[a-z]+-[12]\.webp$/);
        expect(image.alt?.length).toBeGreaterThan(0);
      }
    }
    for (const tag of ['h3', 'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'th', 'td', 'figure', 'figcaption', 'blockquote', 'strong']) {
      expect(seen).toContain(tag);
    }
  });

  it('puts protected backlinks to other network sites and protected internal links into bodies', () => {
    const hosts = new Set(sites.map((s) => hostOf(s.website_url)));
    for (const site of sites) {
      const own = hostOf(site.website_url);
      const paths = new Set(site.articles.map((a) => new URL(a.url).pathname));
      let internal = 0;
      for (const article of site.articles) {
        const parsed = parse(article.body);
        const backlinkAnchors = protectedOf(parsed, 'backlink');
        expect(backlinkAnchors.length).toBeGreaterThanOrEqual(1);
        expect(backlinkAnchors.length).toBeLessThanOrEqual(3);
        for (const anchor of backlinkAnchors) {
          const href = anchor.attributes.href ?? '';
          expect(href).toMatch(/^https:\/\//);
          expect(hosts).toContain(hostOf(href));
          expect(hostOf(href)).not.toBe(own);
          expect(anchor.text.trim().length).toBeGreaterThan(0);
        }
        const internalAnchors = protectedOf(parsed, 'internal');
        expect(internalAnchors.length).toBeLessThanOrEqual(2);
        for (const anchor of internalAnchors) expect(paths).toContain(anchor.attributes.href);
        internal += internalAnchors.length;
        expect(parsed.anchors.length).toBeGreaterThan(backlinkAnchors.length + internalAnchors.length);
      }
      expect(internal).toBeGreaterThan(0);
    }
  });

  it('gives backlinks consistent urls and a realistic mix of types, statuses and categories', () => {
    for (const site of sites) {
      const own = hostOf(site.website_url);
      for (const backlink of site.backlinks) {
        expect(hostOf(backlink.source_url).replace(/^www\./, '')).toBe(backlink.source_domain);
        expect(hostOf(backlink.target_url)).toBe(own);
        expect(backlink.source_domain).not.toBe(own.replace(/^www\./, ''));
        expect(backlink.anchor_text.length).toBeGreaterThan(0);
      }
    }
    const share = (list: typeof backlinks, test: (b: (typeof backlinks)[number]) => boolean): number =>
      list.filter(test).length / list.length;
    expect(share(backlinks, (b) => b.status === 'live')).toBeGreaterThan(0.7);
    expect(share(backlinks, (b) => b.status === 'pending')).toBeGreaterThan(0.02);
    expect(share(backlinks, (b) => b.status === 'lost')).toBeGreaterThan(0.02);
    for (const type of ['exact', 'partial', 'branded', 'url', 'generic'] as const) {
      expect(share(backlinks, (b) => b.anchor_type === type)).toBeGreaterThan(0.03);
    }
    const localShare = (scope: string): number =>
      share(
        sites.filter((s) => s.geographic_scope === scope).flatMap((s) => s.backlinks),
        (b) => b.category === 'local',
      );
    expect(localShare('local')).toBeGreaterThan(localShare('national'));
    expect(localShare('national')).toBeGreaterThan(localShare('international'));
    expect(localShare('international')).toBeGreaterThan(0);
  });
});
