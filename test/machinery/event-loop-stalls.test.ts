import { execFile } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { editsPerDay } from '../../src/services/edit-allowance.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { longestStallDuring } from '../helpers/loop-watch.js';
import { expectUnchanged, patch, PROTECTED_BODY, seedArticle, type SeededArticle, send, snapshot } from '../helpers/write-fixtures.js';
import { decodeEntities, InjectBrowser, pipelineRewrite } from '../web/browser.js';

// Work on a large input runs off the event loop: each answer is what it would be on the loop, and
// a timer on this loop keeps ticking meanwhile. Bounds are generous for a busy machine, and far
// under what the same work held the loop for when it ran there.

const run = promisify(execFile);
const h = useHarness({ listen: true });

describe('the UI', () => {
  it('compares revisions that differ on every line off the event loop, showing the counts and the first lines', async () => {
    const owner = await createCustomer(h.services);
    const [articleId] = (await seedSite(h.services, owner.email, { articles: [{ status: 'published', title: 'Rewritten', published_at: '2026-11-07T09:00:00Z' }] })).articleIds as [number];
    const browser = new InjectBrowser(h.app);
    await browser.signIn(owner.email);
    const paragraphs = (word: string) => Array.from({ length: 3_000 }, (_, i) => `<p>${word} ${i}</p>`).join('');
    await pipelineRewrite(h.services, articleId, paragraphs('old'));
    await pipelineRewrite(h.services, articleId, paragraphs('new'));
    const [second, first] = (await h.services.revisions.list(articleId)).map((r) => r.number);
    const { result: response, longest } = await longestStallDuring(() => browser.get(`/app/articles/${articleId}/revisions/diff?a=${first}&b=${second}`));
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('+3000</span>');
    expect(response.body).toContain('−3000</span>');
    expect(response.body).toContain('… 4000 more lines not shown …');
    expect(longest).toBeLessThan(500);
  });
});

describe('a large article over a socket', () => {
  let article: SeededArticle;
  beforeAll(async () => {
    article = await seedArticle(h.services);
  });

  // Timed tests retry: the whole suite's load on two cores can stretch a run past the bound once.
  it('comes whole in its UI page, its body escaped in the editor, without holding the event loop', { retry: 2 }, async () => {
    const body = `${PROTECTED_BODY}${'<p>Words &amp; “quotes” and <a href="https://x.example/?a=1&amp;b=2">a link</a>.</p>'.repeat(50_000)}`;
    expect((await send(h.app, 'PUT', `/api/v1/articles/${article.articleId}`, article.customer.key, { body })).status).toBe(200);
    const browser = new InjectBrowser(h.app);
    await browser.signIn(article.customer.email);
    const url = `${h.settings.publicUrl}/app/articles/${article.articleId}`;
    const cookie = `anchorage_session=${browser.cookie}`;
    // Timed: the page fetched by another process (the client's own work would hold this event loop).
    const fetcher = `const r = await fetch(process.argv[1], { headers: { cookie: process.argv[2] } }); process.stdout.write(r.status + ' ' + (await r.arrayBuffer()).byteLength);`;
    const { result: timed, longest } = await longestStallDuring(() => run(process.execPath, ['--input-type=module', '-e', fetcher, url, cookie]));
    // Read again here, untimed, for its content.
    const response = await fetch(url, { headers: { cookie } });
    const page = await response.text();
    expect(timed.stdout).toBe(`200 ${Buffer.byteLength(page)}`);
    const textarea = /<textarea id="body"[^>]*>\n([^<]*)<\/textarea>/.exec(page)?.[1];
    expect(textarea !== undefined && decodeEntities(textarea) === body).toBe(true);
    expect(longest).toBeLessThan(100);
  });

  it('is not replaced by a request body of 1.7 million empty objects: 413, without holding the event loop', { retry: 2 }, async () => {
    const before = await snapshot(h, article);
    const url = `${h.settings.publicUrl}/api/v1/articles/${article.articleId}`;
    // Sent by another process (the client's own work would hold this event loop).
    const sender = `const body = '{"body":"<p>x</p>","extra":[' + '{},'.repeat(1_700_000) + '{}]}';
      const r = await fetch(process.argv[1], { method: 'PUT', headers: { authorization: 'Bearer ' + process.argv[2], 'content-type': 'application/json' }, body });
      process.stdout.write(r.status + ' ' + (await r.json()).error);`;
    const { result, longest } = await longestStallDuring(() => run(process.execPath, ['--input-type=module', '-e', sender, url, article.customer.key]));
    expect(result.stdout).toBe('413 payload_too_large');
    expect(longest).toBeLessThan(100);
    await expectUnchanged(h, article, before);
  });
});

describe('replacement_failed on a large body (worker pool)', () => {
  it('comes back with the near-match without holding the event loop', async () => {
    const sections = Array.from({ length: 3000 }, (_, i) => `<h2>Part ${i}</h2><p>Step ${i} of the routine keeps teeth clean and gums healthy.</p>`);
    const a = await seedArticle(h.services, { body: sections.join('') });
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const res = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: 'Step 2500 of the rotuine keeps teeth clean', replace: 'x' }] });
    delay.disable();
    expect(res.status).toBe(409);
    expect(res.body.failures[0].near_match).toMatchObject({ text: 'Step 2500 of the routine keeps teeth clean', equivalent: false });
    expect(delay.max / 1e6).toBeLessThan(1_000);
  });
});

describe('replaceInSite', () => {
  const replace = (siteId: number, key: string, payload: object, query = '') =>
    h.app.inject({ method: 'POST', url: `/api/v1/sites/${siteId}/replace${query}`, headers: { authorization: `Bearer ${key}` }, payload });

  it('replaces in 400 articles without holding the event loop', async () => {
    const owner = await createCustomer(h.services);
    const paragraph = '<p>Our old brand name, <strong>Old Brand</strong>, in a sentence of ordinary length for an article.</p>';
    const { siteId, articleIds } = await seedSite(h.services, owner.email, { articles: Array.from({ length: 400 }, () => ({ status: 'draft' as const, body: paragraph.repeat(20) })) });
    const { result: dry, longestCpu: dryCpu } = await longestStallDuring(() => replace(siteId, owner.key, { find: 'old brand', replace: 'New Brand' }, '?dry_run=true'));
    expect(dry.json().meta).toEqual({ articles: 400, occurrences: 16000, dry_run: true });
    // The day's whole allowance, in one request.
    const { result, longestCpu } = await longestStallDuring(() => replace(siteId, owner.key, { find: 'old brand', replace: 'New Brand', article_ids: articleIds.slice(0, editsPerDay) }));
    expect(result.json().meta).toEqual({ articles: editsPerDay, occurrences: editsPerDay * 40 });
    // A shared machine stretches every turn; the work in one turn is far under this.
    expect(Math.max(longestCpu, dryCpu)).toBeLessThan(200);
  });
});

describe('the OAuth token endpoint', () => {
  it('answers a 5 MB form with an OAuth error, parsed without holding the event loop', async () => {
    const form = new URLSearchParams({ grant_type: 'authorization_code', code: '<x>&'.repeat(450_000) }).toString();
    expect(form.length).toBeGreaterThan(4_000_000);
    // The loop of this process (client and server) is held a while by the client's own work, and
    // once in a while more when the rest of the suite keeps the machine's cores busy: the best of
    // three tries counts.
    let best = Number.POSITIVE_INFINITY;
    for (let attempt = 0; attempt < 3 && best >= 150; attempt++) {
      const { result: response, longest } = await longestStallDuring(() =>
        fetch(`${h.settings.publicUrl}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form }),
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: expect.stringMatching(/^invalid_/) });
      best = Math.min(best, longest);
    }
    expect(best).toBeLessThan(150);
  });
});
