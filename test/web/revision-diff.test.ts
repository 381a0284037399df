import { beforeAll, describe, expect, it } from 'vitest';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { InjectBrowser, pipelineRewrite } from './browser.js';

/** The revision diff page marks the words a revision changed, escaped, and leaves rewritten lines whole. */
describe('revision diff page: changed words', () => {
  const h = useHarness();
  let browser: InjectBrowser;
  let articleId: number;

  beforeAll(async () => {
    const customer = await createCustomer(h.services);
    const site = await seedSite(h.services, customer.email, {
      articles: [{ status: 'published', title: 'Opening hours', published_at: '2026-11-02T09:00:00Z', body: '<p>x</p>' }],
    });
    articleId = site.articleIds[0]!;
    browser = new InjectBrowser(h.app);
    await browser.signIn(customer.email);
  });

  /** The diff region of the page for revisions `a` and `b`. */
  const diffOf = async (a: number, b: number): Promise<string> => {
    const response = await browser.get(`/app/articles/${articleId}/revisions/diff?a=${a}&b=${b}`);
    expect(response.statusCode).toBe(200);
    const region = /<div class="diff"[^>]*>([\s\S]*?)<\/div>/.exec(response.body);
    expect(region).not.toBeNull();
    return region![1]!;
  };

  it('marks a one-word change inside the line, and the rest of the paragraph is plain', async () => {
    const first = await pipelineRewrite(h.services, articleId, '<h2>Hours</h2>\n<p>We open at seven on weekdays and close at six.</p>\n<p>See you soon.</p>');
    const second = await pipelineRewrite(h.services, articleId, '<h2>Hours</h2>\n<p>We open at eight on weekdays and close at six.</p>\n<p>See you soon.</p>');
    const diff = await diffOf(first, second);
    expect(diff).toContain('<del class="diff-line"><span class="diff-sign" aria-hidden="true">−</span><span class="visually-hidden">Removed: </span>&lt;p&gt;We open at <mark class="diff-word">seven</mark> on weekdays and close at six.&lt;/p&gt;</del>');
    expect(diff).toContain('<ins class="diff-line"><span class="diff-sign" aria-hidden="true">+</span><span class="visually-hidden">Added: </span>&lt;p&gt;We open at <mark class="diff-word">eight</mark> on weekdays and close at six.&lt;/p&gt;</ins>');
    expect(diff.match(/<mark /g)).toHaveLength(2);
  });

  it('keeps changed words escaped: markup in a changed run is shown as text', async () => {
    const first = await pipelineRewrite(h.services, articleId, '<p>Fresh bread daily, baked by hand in our oven.</p>');
    const second = await pipelineRewrite(h.services, articleId, '<p>Fresh bread daily, baked by hand in our <img src=x onerror=alert(1)> oven.</p>');
    const diff = await diffOf(first, second);
    expect(diff).not.toContain('<img');
    expect(diff).toMatch(/<mark class="diff-word">[^<]*&lt;[^<]*<\/mark>/);
    expect(diff).toContain('onerror=alert(1)');
  });

  it('shows a rewritten paragraph as whole lines, without word marks', async () => {
    const first = await pipelineRewrite(h.services, articleId, '<p>The bakery opens early every day.</p>');
    const second = await pipelineRewrite(h.services, articleId, '<p>Our shop welcomes guests from dawn onwards.</p>');
    const diff = await diffOf(first, second);
    expect(diff).toContain('&lt;p&gt;The bakery opens early every day.&lt;/p&gt;</del>');
    expect(diff).toContain('&lt;p&gt;Our shop welcomes guests from dawn onwards.&lt;/p&gt;</ins>');
    expect(diff).not.toContain('<mark');
  });
});
