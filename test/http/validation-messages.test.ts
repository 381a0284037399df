import { beforeAll, describe, expect, it } from 'vitest';
import { readOperations } from '../../src/operations/read.js';
import { writeOperations, writeTools } from '../../src/operations/writes.js';
import { issueMcpToken } from '../fuzz/hostile.js';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';

/**
 * Every validation message is in the catalogue's voice, for REST and MCP alike: zod's own wording
 * never reaches a user.
 */
const libraryWording = [/expected/i, /received/i, /invalid input/i, /invalid url/i, /NaN/, /unrecognized key/i, /invalid option/i];

const harness = useHarness();
let customer: Awaited<ReturnType<typeof createCustomer>>;
let siteId: number;
let articleId: number;

beforeAll(async () => {
  customer = await createCustomer(harness.services);
  const site = await seedSite(harness.services, customer.email, {
    name: 'Messages',
    articles: [{ status: 'published', title: 'One', published_at: '2026-11-02T09:00:00Z', body: '<p>One body.</p>' }],
  });
  siteId = site.siteId;
  articleId = site.articleIds[0]!;
});

/** A fresh key every 50 requests, under the 60-per-minute limit; the one before is revoked. */
let keyUses = 0;
let key: { id: number; key: string } | undefined;
async function apiKey(): Promise<string> {
  if (!key || keyUses >= 50) {
    if (key) await harness.services.keys.revoke(key.id);
    key = await harness.services.keys.create(customer.userId, { name: 'messages' });
    keyUses = 0;
  }
  keyUses += 1;
  return key.key;
}

let tokenUses = 0;
let token: string | undefined;
async function mcpToken(): Promise<string> {
  if (!token || tokenUses >= 50) {
    token = await issueMcpToken(harness, customer.userId);
    tokenUses = 0;
  }
  tokenUses += 1;
  return token;
}

interface ErrorBody {
  error: string;
  message: string;
  fields?: Record<string, string[]>;
}

async function rest(method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) {
  const response = await harness.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${await apiKey()}`, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(payload !== undefined ? { payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload) } : {}),
  });
  return { status: response.statusCode, body: response.json() as ErrorBody };
}

async function tool(name: string, args: Record<string, unknown>) {
  const response = await harness.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      authorization: `Bearer ${await mcpToken()}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(response.statusCode).toBe(200);
  const { result } = response.json() as { result: { isError?: boolean; content: { text: string }[] } };
  return { isError: result.isError === true, body: JSON.parse(result.content[0]!.text) as ErrorBody };
}

function multipart(parts: { name: string; value: string | Buffer; filename?: string }[]) {
  const boundary = 'x-validation-messages';
  const chunks = parts.map((part) =>
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}\r\n` +
          (part.filename ? 'Content-Type: application/octet-stream\r\n' : '') +
          '\r\n',
      ),
      Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value),
      Buffer.from('\r\n'),
    ]),
  );
  return { payload: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

const messagesOf = (body: ErrorBody) => [body.message, ...Object.values(body.fields ?? {}).flat()];

function expectCatalogueVoice(body: ErrorBody, context: string) {
  for (const message of messagesOf(body)) {
    for (const pattern of libraryWording) expect(message, `${context}: ${message}`).not.toMatch(pattern);
  }
}

describe('validation messages through REST', () => {
  it('a missing or non-numeric value is named in plain words, never as NaN', async () => {
    const missing = await rest('PUT', `/api/v1/articles/${articleId}`, { title: 'No body' });
    expect(missing.status).toBe(422);
    expect(missing.body.fields).toEqual({ body: ['Required; give a string.'] });

    const wrongType = await rest('PUT', `/api/v1/articles/${articleId}`, { body: 12 });
    expect(wrongType.body.fields).toEqual({ body: ['Must be a string.'] });

    const page = await rest('GET', `/api/v1/sites/${siteId}/articles?page=abc`);
    expect(page.status).toBe(422);
    expect(page.body.fields).toEqual({ page: ['Must be an integer written in decimal digits, such as 2.'] });

    const status = await rest('GET', `/api/v1/sites/${siteId}/articles?status=live`);
    expect(status.body.fields).toEqual({ status: ['Must be one of "draft", "scheduled", "published", "archived".'] });
  });

  it('a field the request does not take is named as its own field; a whole-request problem is (request)', async () => {
    const unknown = await rest('PATCH', `/api/v1/articles/${articleId}`, { title: 'x', meta_descripton: 'typo' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.fields).toEqual({ meta_descripton: ['This request does not take this field.'] });

    const empty = await rest('PATCH', `/api/v1/articles/${articleId}`, {});
    expect(empty.body.fields).toEqual({ '(request)': ['Give at least one of title, meta_description, replacements (each alone or together).'] });

    const emptyFind = await rest('PATCH', `/api/v1/articles/${articleId}`, { replacements: [{ find: '' }] });
    expect(emptyFind.body.fields).toEqual({ 'replacements.0.find': ['Must not be empty.'] });
  });

  it('a featured-image url with another scheme says only absolute http/https URLs, as JSON and as multipart', async () => {
    const only = 'Only absolute http/https URLs are accepted, such as https://images.example.com/cover.jpg.';
    for (const url of ['ftp://images.example/a.jpg', 'javascript:alert(1)', '/relative.jpg', 'images.example/a.jpg']) {
      const json = await rest('POST', `/api/v1/articles/${articleId}/featured-image`, { url });
      expect(json.status, url).toBe(422);
      expect(json.body.fields?.url, url).toEqual([only]);
      const form = multipart([{ name: 'url', value: url }]);
      const sent = await rest('POST', `/api/v1/articles/${articleId}/featured-image`, form.payload, { 'content-type': form.contentType });
      expect(sent.body.fields?.url, url).toEqual([only]);
    }
    const missing = await rest('POST', `/api/v1/articles/${articleId}/featured-image`, {});
    expect(missing.body.fields).toEqual({ url: ['Required; give a string.'] });
  });

  it('a date of the right shape that the calendar lacks says it does not exist', async () => {
    const period = await rest('GET', `/api/v1/sites/${siteId}/stats?period=2026-02-30`);
    expect(period.status).toBe(422);
    expect(period.body.fields).toEqual({ period: ['The date 2026-02-30 does not exist.'] });

    const month = await rest('GET', `/api/v1/sites/${siteId}/stats?period=2026-13`);
    expect(month.body.fields).toEqual({ period: ['The month 2026-13 does not exist.'] });

    const from = await rest('GET', `/api/v1/sites/${siteId}/stats?from=2026-02-29&to=2026-03-01`);
    expect(from.body.fields).toEqual({ from: ['The date 2026-02-29 does not exist.'] });

    const list = await rest('GET', `/api/v1/sites/${siteId}/backlinks?from=2026-04-31`);
    expect(list.body.fields).toEqual({ from: ['The date 2026-04-31 does not exist.'] });

    const shape = await rest('GET', `/api/v1/sites/${siteId}/stats?period=next_week`);
    expect(shape.body.fields).toEqual({ period: ['Must be this_month, last_month, last_30_days, a month YYYY-MM or a day YYYY-MM-DD.'] });
  });

  it('takes the first days of the calendar as the days they are', async () => {
    const answer = async (url: string) => {
      const response = await rest('GET', url);
      expect(response.status, url).toBe(200);
      return (response.body as unknown as { data: unknown }).data;
    };
    expect(await answer(`/api/v1/sites/${siteId}/stats?from=0001-01-01&to=2026-12-31`)).toMatchObject({ from: '0001-01-01', to: '2026-12-31', articles_published: 1 });
    expect(await answer(`/api/v1/sites/${siteId}/stats?period=0099-02`)).toMatchObject({ from: '0099-02-01', to: '0099-02-28', articles_published: 0 });
    expect(((await answer(`/api/v1/sites/${siteId}/articles?from=0001-01-01`)) as { id: number }[]).map((a) => a.id)).toEqual([articleId]);
    expect(await answer(`/api/v1/sites/${siteId}/backlinks?from=0000-01-01&to=0001-12-31`)).toEqual([]);
    const lacking = await rest('GET', `/api/v1/sites/${siteId}/stats?from=0100-02-29&to=0100-03-01`);
    expect(lacking.body.fields).toEqual({ from: ['The date 0100-02-29 does not exist.'] });
  });

  it('the multipart 413 states its limit, as the JSON one does', async () => {
    const form = multipart([{ name: 'image', value: Buffer.alloc(12 * 1024 * 1024 + 1), filename: 'big.png' }]);
    const response = await rest('POST', `/api/v1/articles/${articleId}/featured-image`, form.payload, { 'content-type': form.contentType });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ error: 'payload_too_large', message: 'Multipart bodies may be at most 12582912 bytes (12 MiB).' });

    const json = await rest('PUT', `/api/v1/articles/${articleId}`, JSON.stringify({ body: 'x'.repeat(5 * 1024 * 1024) }));
    expect(json.status).toBe(413);
    expect(json.body.message).toMatch(/at most 5242880 bytes/);
  });
});

describe('validation messages through MCP', () => {
  it('update_article without body or edits lists the accepted combinations under (arguments), not body', async () => {
    const accepted =
      'Send either body (the whole new HTML, optionally with title) or any of title, meta_description and replacements (small edits); reason and dry_run go with either.';
    const none = await tool('update_article', { article_id: articleId, reason: 'only a reason' });
    expect(none.isError).toBe(true);
    expect(none.body.fields).toEqual({ '(arguments)': [accepted] });

    const both = await tool('update_article', { article_id: articleId, body: '<p>x</p>', meta_description: 'y' });
    expect(both.body.fields).toEqual({ body: [`Not with meta_description or replacements. ${accepted}`] });
  });

  it('names wrong types, schemes, missing dates and unknown arguments in the catalogue voice', async () => {
    const wrongType = await tool('list_articles', { site_id: siteId, page: 'abc' });
    expect(wrongType.body.fields).toEqual({ page: ['Must be an integer written in decimal digits, such as 2.'] });

    const url = await tool('replace_featured_image', { article_id: articleId, url: 'ftp://images.example/a.jpg' });
    expect(url.body.fields).toEqual({ url: ['Only absolute http/https URLs are accepted, such as https://images.example.com/cover.jpg.'] });

    const period = await tool('get_stats', { site_id: siteId, period: '2026-02-30' });
    expect(period.body.fields).toEqual({ period: ['The date 2026-02-30 does not exist.'] });

    const base64 = await tool('replace_featured_image', { article_id: articleId, image_base64: '***', filename: 'a.png' });
    expect(base64.body.fields).toEqual({ image_base64: ['Must be base64 (A–Z, a–z, 0–9, +, /, padded with =).'] });

    const missing = await tool('get_article', {});
    expect(missing.body.fields).toEqual({ article_id: ['Required; give a number.'] });
  });
});

/** Values that break a field's type, format or bounds in every way a client might. */
const invalidValues: unknown[] = [
  null,
  true,
  12.5,
  -1,
  0,
  Number.MAX_SAFE_INTEGER + 2,
  '',
  ' ',
  'abc',
  'NaN',
  '1e3',
  '2026-02-30',
  '2026-13',
  'ftp://x.example/a.jpg',
  'x'.repeat(3000),
  [],
  [{}],
  [{ find: '' }],
  [{ find: 1, replace: null, all: 'yes' }],
  Array.from({ length: 51 }, () => ({ find: 'a' })),
  {},
  { nested: true },
];
const invalidQueryValues = ['', 'abc', 'NaN', '-1', '0', '1.5', '1e3', '101', '99999999999999999999', '2026-02-30', '2026-13', 'x'.repeat(300)];

describe('sweep: invalid values to every operation never show library wording', () => {
  it('REST: every parameter of every operation', async () => {
    let checked = 0;
    for (const operation of [...readOperations, ...writeOperations]) {
      const shape = operation.input.shape as Record<string, unknown>;
      const path = operation.rest.path.replace('{id}', String(operation.rest.pathId === 'site_id' ? siteId : articleId));
      const isWrite = operation.rest.method !== 'GET';
      for (const field of Object.keys(shape)) {
        if (field === operation.rest.pathId) continue;
        const inQuery = !isWrite || operation.rest.queryFields?.includes(field);
        const values = inQuery ? invalidQueryValues : invalidValues;
        for (const value of values) {
          const response = inQuery
            ? await rest(operation.rest.method, `/api/v1${path}?${new URLSearchParams({ [field]: String(value) })}`, isWrite ? {} : undefined)
            : await rest(operation.rest.method, `/api/v1${path}?dry_run=true`, { [field]: value });
          expect(response.status, `${operation.name} ${field}=${JSON.stringify(value)}`).toBeLessThan(500);
          if (response.status >= 400) {
            expectCatalogueVoice(response.body, `${operation.name} ${field}=${JSON.stringify(value)}`);
            checked += 1;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(150);
  }, 120_000);

  it('MCP: every argument of every tool', async () => {
    const toolNames = [...readOperations.map((operation) => operation.tool?.name), ...writeTools.map((t) => t.name)].filter(
      (name): name is string => name !== undefined,
    );
    const argumentsOf: Record<string, string[]> = {
      list_sites: ['page', 'per_page'],
      list_articles: ['site_id', 'from', 'to', 'status', 'page', 'per_page'],
      get_article: ['article_id'],
      list_backlinks: ['site_id', 'from', 'to', 'status', 'category', 'page', 'per_page'],
      get_stats: ['site_id', 'period', 'from', 'to'],
      update_article: ['article_id', 'body', 'title', 'meta_description', 'replacements', 'reason', 'dry_run'],
      replace_featured_image: ['article_id', 'url', 'image_base64', 'filename', 'reason'],
    };
    expect(toolNames.sort()).toEqual(Object.keys(argumentsOf).sort());
    let checked = 0;
    for (const [name, names] of Object.entries(argumentsOf)) {
      const valid: Record<string, unknown> = name.startsWith('list_') || name === 'get_stats' ? { site_id: siteId } : { article_id: articleId };
      if (name === 'list_sites') delete valid.site_id;
      for (const argument of [...names, 'unknown_argument']) {
        for (const value of invalidValues) {
          const result = await tool(name, { ...valid, dry_run: name === 'update_article' ? true : undefined, [argument]: value });
          if (result.isError) {
            expectCatalogueVoice(result.body, `${name} ${argument}=${JSON.stringify(value)}`);
            checked += 1;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(300);
  }, 180_000);
});
