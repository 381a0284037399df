import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiGet, freshKey, seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { seedArticle } from '../helpers/write-fixtures.js';

/** Through REST: paging words, query parameters, backlink filters, article titles. */

const h = useHarness();
let customer: Awaited<ReturnType<typeof createCustomer>>;
/** A new key per test: each key may make 60 requests a minute. */
let key: string;
let siteId: number;
let backlinkIds: number[];

beforeAll(async () => {
  customer = await createCustomer(h.services);
  const seeded = await seedSite(h.services, customer.email, {
    name: 'Filters',
    articles: [{ status: 'published', title: 'One', published_at: '2026-10-02T09:00:00Z', body: '<p>One.</p>' }],
    backlinks: [
      { category: 'industry', status: 'live', acquired_at: '2026-10-01T10:00:00Z', anchor_text: 'a' },
      { category: 'local', status: 'lost', acquired_at: '2026-10-02T10:00:00Z', anchor_text: 'b' },
      { category: 'industry', status: 'lost', acquired_at: '2026-10-03T10:00:00Z', anchor_text: 'c' },
      { category: 'local', status: 'pending', acquired_at: '2026-11-04T10:00:00Z', anchor_text: 'd' },
      { category: 'industry', status: 'lost', acquired_at: null, anchor_text: 'e' },
      { category: 'local', status: null, acquired_at: '2026-10-05T10:00:00Z', anchor_text: 'f' },
      { category: 'industry', status: 'lost', acquired_at: '2026-11-06T10:00:00Z', anchor_text: 'g' },
    ],
  });
  siteId = seeded.siteId;
  backlinkIds = seeded.backlinkIds;
});

beforeEach(async () => {
  key = await freshKey(h.services, customer.userId);
});

const get = (path: string) => apiGet(h.app, `/api/v1${path}`, key);

describe('paging out of range', () => {
  it('gives the range, not the integer syntax, on every list', async () => {
    for (const list of ['/sites', `/sites/${siteId}/articles`, `/sites/${siteId}/backlinks`]) {
      for (const [query, field, message] of [
        ['per_page=101', 'per_page', 'Must be from 1 to 100.'],
        ['per_page=0', 'per_page', 'Must be from 1 to 100.'],
        ['per_page=100000000000000000000', 'per_page', 'Must be from 1 to 100.'],
        ['page=0', 'page', 'Must be 1 or more: pages are numbered from 1.'],
      ] as const) {
        const response = await get(`${list}?${query}`);
        expect(response.status, `${list}?${query}`).toBe(422);
        expect(response.body, `${list}?${query}`).toMatchObject({ error: 'validation_failed', fields: { [field]: [message] } });
      }
      // A value that is no integer is still told how to write one.
      const written = await get(`${list}?page=1.5&per_page=-1`);
      expect(written.body.fields).toEqual({
        page: ['Must be an integer written in decimal digits, such as 2.'],
        per_page: ['Must be an integer written in decimal digits, such as 2.'],
      });
    }
  });

  it('says so in the OpenAPI document, whose bounds are the ones applied', async () => {
    const document = (await apiGet(h.app, '/api/v1/openapi.json')).body;
    const parameters = document.paths['/api/v1/sites/{id}/backlinks'].get.parameters as { name: string; schema: Record<string, unknown>; description?: string }[];
    const byName = Object.fromEntries(parameters.map((p) => [p.name, p]));
    expect(byName.per_page!.schema).toMatchObject({ minimum: 1, maximum: 100 });
    expect(byName.page!.schema).toMatchObject({ minimum: 1 });
  });
});

describe('query parameters an operation does not take', () => {
  it('are refused with 422 validation_failed naming each, on reads and writes alike', async () => {
    const article = await seedArticle(h.services, {}, customer);
    const reads = [
      [`/sites/${siteId}/backlinks?colour=red&page=1&size=3`, ['colour', 'size']],
      [`/sites/${siteId}/articles?sort=title`, ['sort']],
      [`/sites/${siteId}/stats?month=2026-10`, ['month']],
      [`/articles/${article.articleId}?fields=body`, ['fields']],
      ['/sites?_=1767225600000', ['_']],
      [`/sites/${siteId}/backlinks?Status=lost`, ['Status']],
      [`/sites/${siteId}/backlinks?anchor_type[]=exact`, ['anchor_type[]']],
    ] as const;
    for (const [path, names] of reads) {
      const response = await get(path);
      expect(response.status, path).toBe(422);
      expect(response.body.error, path).toBe('validation_failed');
      expect(Object.keys(response.body.fields).sort(), path).toEqual([...names].sort());
      for (const name of names) expect(response.body.fields[name], path).toEqual(['This request does not take this field.']);
    }

    // A write's query takes dry_run only: a misspelt one is refused, not a real save.
    const before = await h.services.revisions.list(article.articleId);
    const patched = await h.app.inject({
      method: 'PATCH',
      url: `/api/v1/articles/${article.articleId}?dryrun=true`,
      headers: { authorization: `Bearer ${article.customer.key}`, 'content-type': 'application/json' },
      payload: { title: 'Saved by mistake' },
    });
    expect(patched.statusCode).toBe(422);
    expect(patched.json().fields).toEqual({ dryrun: ['This request does not take this field.'] });
    expect(await h.services.revisions.list(article.articleId)).toHaveLength(before.length);
    const dry = await h.app.inject({
      method: 'PATCH',
      url: `/api/v1/articles/${article.articleId}?dry_run=true`,
      headers: { authorization: `Bearer ${article.customer.key}`, 'content-type': 'application/json' },
      payload: { title: 'Only tried' },
    });
    expect(dry.statusCode).toBe(200);
    expect(await h.services.revisions.list(article.articleId)).toHaveLength(before.length);
  });

  it('are refused as the OpenAPI document says', async () => {
    const document = (await apiGet(h.app, '/api/v1/openapi.json')).body;
    expect(document.info.description).toContain('A query parameter or body field an operation does not take is refused with 422 `validation_failed` naming it, never ignored.');
  });
});

describe('backlink filters', () => {
  const anchors = (response: { body: { data: { anchor_text: string }[] } }) => response.body.data.map((b) => b.anchor_text);

  it('status and category keep what they name, with each other, with from/to and with paging', async () => {
    const lost = await get(`/sites/${siteId}/backlinks?status=lost`);
    expect(lost.status).toBe(200);
    expect(anchors(lost)).toEqual(['g', 'c', 'b', 'e']);
    expect(lost.body.meta).toEqual({ page: 1, per_page: 25, total: 4, last_page: 1 });
    expect(anchors(await get(`/sites/${siteId}/backlinks?status=live`))).toEqual(['a']);
    expect(anchors(await get(`/sites/${siteId}/backlinks?status=pending`))).toEqual(['d']);
    expect(anchors(await get(`/sites/${siteId}/backlinks?category=local`))).toEqual(['d', 'f', 'b']);
    expect(anchors(await get(`/sites/${siteId}/backlinks?category=industry&status=lost`))).toEqual(['g', 'c', 'e']);
    expect(anchors(await get(`/sites/${siteId}/backlinks?status=lost&from=2026-10-01&to=2026-10-31`))).toEqual(['c', 'b']);
    expect(anchors(await get(`/sites/${siteId}/backlinks?category=local&from=2026-10-01&to=2026-10-31`))).toEqual(['f', 'b']);
    const second = await get(`/sites/${siteId}/backlinks?status=lost&per_page=3&page=2`);
    expect(second.body).toMatchObject({ meta: { page: 2, per_page: 3, total: 4, last_page: 2 } });
    expect(anchors(second)).toEqual(['e']);
    const past = await get(`/sites/${siteId}/backlinks?category=local&per_page=2&page=3`);
    expect(past.body).toEqual({ data: [], meta: { page: 3, per_page: 2, total: 3, last_page: 2 } });
    // Unfiltered, every backlink as before.
    expect((await get(`/sites/${siteId}/backlinks`)).body.meta.total).toBe(backlinkIds.length);
  });

  it('refuses a value outside the interface’s, repeated filters and reversed days', async () => {
    for (const [query, field, message] of [
      ['status=dead', 'status', 'Must be one of "pending", "live", "lost".'],
      ['status=LOST', 'status', 'Must be one of "pending", "live", "lost".'],
      ['category=national', 'category', 'Must be one of "industry", "local".'],
      ['category=', 'category', 'Must be one of "industry", "local".'],
      ['status=lost&status=live', 'status', 'Give this parameter once.'],
      ['status[]=lost', 'status[]', 'Arrays are not accepted: give status once, as status=value.'],
    ] as const) {
      const response = await get(`/sites/${siteId}/backlinks?${query}`);
      expect(response.status, query).toBe(422);
      expect(response.body.fields, query).toEqual({ [field]: [message] });
    }
    const reversed = await get(`/sites/${siteId}/backlinks?status=lost&from=2026-11-01&to=2026-10-01`);
    expect(reversed.status).toBe(422);
  });

  it('are in the OpenAPI document, with their values', async () => {
    const document = (await apiGet(h.app, '/api/v1/openapi.json')).body;
    const parameters = document.paths['/api/v1/sites/{id}/backlinks'].get.parameters as { name: string; in: string; schema: { enum?: string[] } }[];
    const byName = Object.fromEntries(parameters.map((p) => [p.name, p]));
    expect(byName.status).toMatchObject({ in: 'query', schema: { enum: ['pending', 'live', 'lost'] } });
    expect(byName.category).toMatchObject({ in: 'query', schema: { enum: ['industry', 'local'] } });
  });
});

describe('an article’s title', () => {
  it('must hold more than white space over PUT and PATCH, alone or with other edits; nothing is saved', async () => {
    const article = await seedArticle(h.services, {}, customer);
    const headers = { authorization: `Bearer ${article.customer.key}`, 'content-type': 'application/json' };
    const before = await apiGet(h.app, `/api/v1/articles/${article.articleId}`, article.customer.key);
    const writes = [
      ['PATCH', { title: '' }],
      ['PATCH', { title: '   ' }],
      ['PATCH', { title: '\n\t\u00a0' }],
      ['PATCH', { title: ' ', meta_description: 'New meta.' }],
      ['PUT', { title: '', body: '<p>New body.</p>' }],
      ['PUT', { title: '  ', body: before.body.data.body }],
    ] as const;
    for (const [method, payload] of writes) {
      for (const dryRun of ['', '?dry_run=true']) {
        const response = await h.app.inject({ method, url: `/api/v1/articles/${article.articleId}${dryRun}`, headers, payload });
        const context = `${method}${dryRun} ${JSON.stringify(payload)}`;
        expect(response.statusCode, context).toBe(422);
        expect(response.json(), context).toMatchObject({ error: 'validation_failed', fields: { title: ['Must not be empty or only white space.'] } });
      }
    }
    const after = await apiGet(h.app, `/api/v1/articles/${article.articleId}`, article.customer.key);
    expect(after.headers.etag).toBe(before.headers.etag);
    expect(after.body.data.title).toBe('Original title');

    // A title with something to read is saved as sent, spaces and all.
    const saved = await h.app.inject({ method: 'PATCH', url: `/api/v1/articles/${article.articleId}`, headers, payload: { title: ' A ' } });
    expect(saved.statusCode).toBe(200);
    expect(saved.json().data.title).toBe(' A ');
  });

  it('is refused by the service itself, whatever channel calls it', async () => {
    const article = await seedArticle(h.services, {}, customer);
    const actor = {
      accountId: article.customer.accountId,
      userId: article.customer.userId,
      credential: { kind: 'session' as const },
      channel: 'editor' as const,
      staff: false,
      scopes: ['read' as const, 'write' as const],
      request: null,
    };
    await expect(h.services.articleWrites.edit(actor, article.articleId, { title: ' ' })).rejects.toMatchObject({
      code: 'validation_failed',
      details: { fields: { title: ['Must not be empty or only white space.'] } },
    });
    await expect(h.services.articleWrites.replace(actor, article.articleId, { title: '', body: '<p>x</p>' })).rejects.toMatchObject({ code: 'validation_failed' });
    // The length limits too: the service holds the same rules as the API schemas and the UI.
    await expect(
      h.services.articleWrites.edit(actor, article.articleId, { title: 'é'.repeat(256), meta_description: 'm'.repeat(501), reason: 'r'.repeat(2001) }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      details: { fields: { title: ['At most 255 characters.'], meta_description: ['At most 500 characters.'], reason: ['At most 2000 characters.'] } },
    });
    await expect(h.services.articleWrites.replaceFeaturedImage(actor, article.articleId, { url: 'https://example.com/a.png', reason: 'r'.repeat(2001), fingerprint: 'f' })).rejects.toMatchObject({
      details: { fields: { reason: ['At most 2000 characters.'] } },
    });
    expect(await h.services.revisions.list(article.articleId)).toHaveLength(1);
    // At the limit, counted in code points (a 4-byte character is one).
    await expect(h.services.articleWrites.edit(actor, article.articleId, { title: '😀'.repeat(255) })).resolves.toBeDefined();
  });

  it('is documented in the OpenAPI document as not empty', async () => {
    const document = (await apiGet(h.app, '/api/v1/openapi.json')).body;
    const patch = document.paths['/api/v1/articles/{id}'].patch.requestBody.content['application/json'].schema;
    const title = (patch.properties ?? document.components.schemas[patch.$ref.split('/').at(-1)].properties).title;
    expect(title).toMatchObject({ minLength: 1, pattern: '\\S', maxLength: 255 });
  });
});
