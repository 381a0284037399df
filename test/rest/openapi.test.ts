import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { apiGet, articleFields, articleWithBodyFields, backlinkFields, seedSite, siteFields, statsFields } from '../helpers/fixtures.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
// The schema validator below holds the event loop for seconds on a busy machine: load shedding
// (tested elsewhere) would then answer the /docs requests with 503.
const h = useHarness({ env: { OVERLOAD_EVENT_LOOP_DELAY_MS: '0' } });
let doc: any;

beforeAll(async () => {
  const res = await apiGet(h.app, '/api/v1/openapi.json');
  expect(res.status).toBe(200);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  doc = res.body;
});

const readOperations = {
  listSites: ['get', '/api/v1/sites'],
  listArticles: ['get', '/api/v1/sites/{id}/articles'],
  getArticle: ['get', '/api/v1/articles/{id}'],
  listBacklinks: ['get', '/api/v1/sites/{id}/backlinks'],
  getStats: ['get', '/api/v1/sites/{id}/stats'],
  getOpenApi: ['get', '/api/v1/openapi.json'],
} as const;

const operation = (name: keyof typeof readOperations): any => {
  const [method, path] = readOperations[name];
  return doc.paths[path]?.[method];
};
const param = (op: any, name: string): any => op.parameters?.find((p: any) => p.name === name);
const errorRef = '#/components/schemas/Error';

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    if (!result.valid) console.error(JSON.stringify(result.errors, null, 2));
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('is OpenAPI 3.1.x with document version 1.0.0', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.version).toBe('1.0.0');
    expect(typeof doc.info.title).toBe('string');
  });

  it('names every read operation as an operationId, on its method and path', () => {
    const ids: string[] = [];
    for (const methods of Object.values(doc.paths) as any[]) {
      for (const op of Object.values(methods) as any[]) if (op?.operationId) ids.push(op.operationId);
    }
    for (const name of Object.keys(readOperations) as (keyof typeof readOperations)[]) {
      expect(ids, name).toContain(name);
      expect(operation(name)?.operationId, name).toBe(name);
    }
    expect(new Set(ids).size).toBe(ids.length);
    // Everything lives under /api/v1/.
    for (const path of Object.keys(doc.paths)) expect(path).toMatch(/^\/api\/v1\//);
  });

  it.each(['listSites', 'listArticles', 'listBacklinks'] as const)('%s documents page and per_page with bounds and defaults', (name) => {
    const op = operation(name);
    const page = param(op, 'page');
    expect(page).toMatchObject({ in: 'query', required: false });
    expect(page.schema).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
    const perPage = param(op, 'per_page');
    expect(perPage).toMatchObject({ in: 'query', required: false });
    expect(perPage.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 25 });
  });

  it('documents the filters of each list', () => {
    expect(param(operation('listSites'), 'account')).toMatchObject({ in: 'query', required: false, schema: { type: 'string' } });
    expect(param(operation('listSites'), 'website')).toMatchObject({ in: 'query', required: false, schema: { type: 'string' } });
    for (const name of ['listArticles', 'listBacklinks', 'getStats'] as const) {
      for (const field of ['from', 'to']) {
        expect(param(operation(name), field), `${name} ${field}`).toMatchObject({
          in: 'query',
          required: false,
          schema: { type: 'string', format: 'date' },
        });
      }
    }
    expect(param(operation('listArticles'), 'status').schema.enum).toEqual(['draft', 'scheduled', 'published', 'archived']);
    expect(param(operation('getStats'), 'period')).toMatchObject({ in: 'query', required: false, schema: { type: 'string' } });
  });

  it('documents the path id as a required integer', () => {
    for (const name of ['listArticles', 'getArticle', 'listBacklinks', 'getStats'] as const) {
      expect(param(operation(name), 'id'), name).toMatchObject({ in: 'path', required: true, schema: { type: 'integer' } });
    }
  });

  it('lists the interface’s error statuses of each read operation', () => {
    const statuses = (name: keyof typeof readOperations) => Object.keys(operation(name).responses);
    expect(statuses('listSites')).toEqual(expect.arrayContaining(['200', '401', '403']));
    expect(statuses('listArticles')).toEqual(expect.arrayContaining(['200', '401', '404']));
    expect(statuses('getArticle')).toEqual(expect.arrayContaining(['200', '401', '404']));
    expect(statuses('listBacklinks')).toEqual(expect.arrayContaining(['200', '401', '404']));
    expect(statuses('getStats')).toEqual(expect.arrayContaining(['200', '401', '404', '422']));
    for (const name of ['listSites', 'listArticles', 'getArticle', 'listBacklinks', 'getStats'] as const) {
      expect(statuses(name), name).toContain('429');
    }
    expect(statuses('getOpenApi')).toContain('200');
    expect(statuses('getOpenApi')).not.toContain('401');
  });

  it('makes every error response of every operation reference the Error schema', () => {
    let checked = 0;
    for (const [path, methods] of Object.entries(doc.paths) as [string, any][]) {
      for (const [method, op] of Object.entries(methods) as [string, any][]) {
        for (const [status, response] of Object.entries(op.responses ?? {}) as [string, any][]) {
          if (Number(status) < 400) continue;
          expect(response.content?.['application/json']?.schema?.$ref, `${method} ${path} ${status}`).toBe(errorRef);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('describes the Error body', () => {
    const error = doc.components.schemas.Error;
    expect(error.type).toBe('object');
    expect([...error.required].sort()).toEqual(['error', 'message']);
    expect(error.properties.message.type).toBe('string');
    expect(error.properties.error.enum).toEqual(
      expect.arrayContaining(['unauthenticated', 'forbidden', 'not_found', 'validation_failed', 'rate_limited', 'internal_error']),
    );
    expect(error.properties.limit.type).toBe('integer');
    expect(error.properties.protected_links.type).toBe('array');
  });

  it('describes the resources with exactly the interface fields', () => {
    const schemas = doc.components.schemas;
    const fields = (name: string) => Object.keys(schemas[name].properties).sort();
    expect(fields('Site')).toEqual(siteFields);
    expect(fields('Article')).toEqual(articleFields);
    expect(fields('ArticleWithBody')).toEqual(articleWithBodyFields);
    expect(fields('Backlink')).toEqual(backlinkFields);
    expect(fields('Stats')).toEqual(statsFields);
    expect(fields('PageMeta')).toEqual(['last_page', 'page', 'per_page', 'total']);
    expect(fields('ProtectedLink')).toEqual(['href', 'text', 'type']);
    expect(schemas.Backlink.properties.category.enum).toEqual(['industry', 'local']);
    expect(schemas.ProtectedLink.properties.type.enum).toEqual(['backlink', 'internal']);
  });

  it('references the resources from the 200 responses', () => {
    const ok = (name: keyof typeof readOperations) => operation(name).responses['200'].content['application/json'].schema;
    expect(ok('listSites').properties.data.items.$ref).toBe('#/components/schemas/Site');
    expect(ok('listSites').properties.meta.$ref).toBe('#/components/schemas/PageMeta');
    expect(ok('listArticles').properties.data.items.$ref).toBe('#/components/schemas/Article');
    expect(ok('listBacklinks').properties.data.items.$ref).toBe('#/components/schemas/Backlink');
    expect(ok('getArticle').properties.data.$ref).toBe('#/components/schemas/ArticleWithBody');
    expect(ok('getStats').properties.data.$ref).toBe('#/components/schemas/Stats');
  });

  it('declares both key forms, and no security for getOpenApi', () => {
    expect(doc.components.securitySchemes.bearerKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.headerKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    for (const name of ['listSites', 'listArticles', 'getArticle', 'listBacklinks', 'getStats'] as const) {
      expect(operation(name).security, name).toEqual([{ bearerKey: [] }, { headerKey: [] }]);
    }
    expect(operation('getOpenApi').security).toEqual([]);
  });
});

/** Every operation of the document with its method and path. */
const allOperations = (): [string, string, any][] =>
  Object.entries(doc.paths).flatMap(([path, methods]: [string, any]) =>
    Object.entries(methods).map(([method, op]) => [method, path, op] as [string, string, any]),
  );

describe('one component per shape, tags, headers, descriptions', () => {
  it('has no input twin of any schema, and every component is used', () => {
    const names = Object.keys(doc.components.schemas);
    expect(names.filter((name) => name.endsWith('Input'))).toEqual([]);
    const { components, ...rest } = doc;
    const text = JSON.stringify({ ...rest, components: { ...components, schemas: undefined } }) + JSON.stringify(components.schemas);
    for (const name of names) expect(text, name).toContain(`"#/components/schemas/${name}"`);
    for (const name of Object.keys(doc.components.headers)) expect(text, name).toContain(`"#/components/headers/${name}"`);
    expect(JSON.stringify(doc).match(/Input"/g)).toBeNull();
    // The PATCH body's replacement items are a component of their own, under their plain name.
    const patchBody = doc.paths['/api/v1/articles/{id}'].patch.requestBody.content['application/json'].schema;
    expect(patchBody.properties.replacements.items.$ref).toBe('#/components/schemas/Replacement');
    expect(doc.components.schemas.Replacement.required).toEqual(['find']);
  });

  it('declares every tag it uses, each with a description', () => {
    const declared = new Map<string, string>(doc.tags.map((tag: any) => [tag.name, tag.description]));
    const used = new Set(allOperations().flatMap(([, , op]) => op.tags ?? []));
    expect([...used].sort()).toEqual(['Article writes', 'Meta', 'Reporting']);
    for (const tag of used) expect(declared.get(tag as string), tag as string).toMatch(/\w+ \w+ \w+/);
    for (const [method, path, op] of allOperations()) expect(op.tags?.length, `${method} ${path}`).toBe(1);
  });

  it('gives every response a real description, never "Default Response"', () => {
    expect(JSON.stringify(doc).split('Default Response').length - 1).toBe(0);
    for (const [method, path, op] of allOperations()) {
      for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
        expect(response.description, `${method} ${path} ${status}`).toMatch(/\w+ \w+/);
      }
    }
    expect(operation('getArticle').responses['200'].description).toMatch(/HTML body/);
    expect(operation('getOpenApi').responses['200'].description).toMatch(/OpenAPI/);
  });

  it('names a license and a contact', () => {
    expect(doc.info.license).toEqual({ name: expect.stringMatching(/Proprietary/), identifier: 'LicenseRef-Proprietary' });
    expect(doc.info.contact).toEqual({ name: 'Anchorage', url: 'http://localhost:3999/app/connect' });
  });

  it('documents the rate-limit headers on every answer past authentication, and Retry-After on 429 and 503', () => {
    const limitHeaders = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];
    let checked = 0;
    for (const [method, path, op] of allOperations()) {
      const authenticated = op.security.length > 0;
      for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
        const names = Object.keys(response.headers ?? {});
        const where = `${method} ${path} ${status}`;
        if (authenticated && status !== '401' && status !== '503') expect(names, where).toEqual(expect.arrayContaining(limitHeaders));
        else expect(names.filter((name) => limitHeaders.includes(name)), where).toEqual([]);
        expect(names[0], where).toBe('X-Request-Id');
        if (status === '429' || status === '503') expect(names, where).toContain('Retry-After');
        else expect(names, where).not.toContain('Retry-After');
        for (const name of names) expect(response.headers[name], where).toEqual({ $ref: `#/components/headers/${name}` });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
    const headers = doc.components.headers;
    expect(headers['Retry-After'].schema.type).toBe('integer');
    expect(headers['X-RateLimit-Reset'].description).toMatch(/Unix time/);
    expect(headers['RateLimit-Policy'].description).toMatch(/"edits";q=200;w=86400/);
  });

  it('documents the ETag on the article answers, and 304 for If-None-Match on GET article', () => {
    const article = doc.paths['/api/v1/articles/{id}'];
    const writes = [article.put, article.patch, doc.paths['/api/v1/articles/{id}/featured-image'].post];
    for (const op of [operation('getArticle'), ...writes]) {
      expect(op.responses['200'].headers.ETag, op.operationId).toEqual({ $ref: '#/components/headers/ETag' });
    }
    for (const name of ['listSites', 'listArticles', 'listBacklinks', 'getStats', 'getOpenApi'] as const) {
      expect(JSON.stringify(operation(name)), name).not.toContain('ETag');
    }
    const notModified = operation('getArticle').responses['304'];
    expect(notModified.description).toMatch(/If-None-Match/);
    expect(notModified.content).toBeUndefined();
    expect(notModified.headers.ETag).toEqual({ $ref: '#/components/headers/ETag' });
    expect(param(operation('getArticle'), 'if-none-match')).toMatchObject({ in: 'header', required: false, schema: { type: 'string' } });
    for (const op of writes) expect(op.responses['304'], op.operationId).toBeUndefined();
    expect(JSON.stringify(doc).includes('x-etag')).toBe(false);
  });
});

describe('the documented headers are the ones sent', () => {
  /** The header names the document lists for this operation and status, lower-cased as Node gives them. */
  const documented = (method: string, path: string, status: number): string[] =>
    Object.keys(doc.paths[path][method].responses[String(status)].headers).map((name) => name.toLowerCase());

  const expectSent = (method: string, path: string, response: { statusCode: number; headers: Record<string, unknown> }) => {
    const names = documented(method, path, response.statusCode);
    expect(names.length, `${method} ${path} ${response.statusCode}`).toBeGreaterThan(0);
    for (const name of names) expect(response.headers[name], `${method} ${path} ${response.statusCode} ${name}`).toBeDefined();
  };

  it('on GET article (200, 304, 404, 401), PATCH (200), a 429 and getOpenApi', async () => {
    const customer = await createCustomer(h.services);
    const {
      articleIds: [id],
    } = await seedSite(h.services, customer.email, { articles: [{ status: 'published', title: 'T', body: '<p>Words here.</p>' }] });
    const auth = { authorization: `Bearer ${customer.key}` };
    const article = '/api/v1/articles/{id}';
    const ok = await h.app.inject({ url: `/api/v1/articles/${id}`, headers: auth });
    expectSent('get', article, ok);
    expectSent('get', article, await h.app.inject({ url: `/api/v1/articles/${id}`, headers: { ...auth, 'if-none-match': String(ok.headers.etag) } }));
    expectSent('get', article, await h.app.inject({ url: `/api/v1/articles/${id! + 1_000_000}`, headers: auth }));
    expectSent('get', article, await h.app.inject({ url: `/api/v1/articles/${id}` }));
    const patched = await h.app.inject({ method: 'PATCH', url: `/api/v1/articles/${id}`, headers: auth, payload: { title: 'New' } });
    expectSent('patch', article, patched);
    expect(String(patched.headers['ratelimit-policy'])).toContain('"edits";q=200;w=86400');
    expectSent('get', '/api/v1/openapi.json', await h.app.inject({ url: '/api/v1/openapi.json' }));
    let refused;
    for (let i = 0; i < 70 && refused === undefined; i++) {
      const res = await h.app.inject({ url: '/api/v1/sites', headers: auth });
      if (res.statusCode === 429) refused = res;
    }
    expectSent('get', '/api/v1/sites', refused!);
  });
});

describe('/docs', () => {
  it('carries the service’s name, anchor logo, favicon and theme', async () => {
    const res = await apiGet(h.app, '/docs');
    expect(res.status).toBe(200);
    expect(res.text).toContain('<title>Anchorage API reference</title>');
    expect(res.text).toContain('<link rel="icon" type="image/svg+xml" href="/docs/static/theme/anchor.svg" sizes="any" />');
    expect(res.text).toContain('<link rel="stylesheet" type="text/css" href="/docs/static/theme/anchorage.css" />');
    const icon = await h.app.inject({ url: '/docs/static/theme/anchor.svg' });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(icon.body).toContain('<title>Anchorage</title>');
    const css = await h.app.inject({ url: '/docs/static/theme/anchorage.css' });
    expect(css.statusCode).toBe(200);
    expect(css.body).toContain('.swagger-ui .topbar');
    expect(css.body).toContain('#1d5fa8');
    const init = await h.app.inject({ url: '/docs/static/swagger-initializer.js' });
    const anchor = Buffer.from(await (await import('node:fs/promises')).readFile(new URL('../../src/web/assets/anchor.svg', import.meta.url)));
    expect(init.body).toContain(`data:image/svg+xml;base64,${anchor.toString('base64')}`);
  });

  it('serves HTML whose assets all come from the service', async () => {
    const res = await apiGet(h.app, '/docs');
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^text\/html/);
    const html = res.text;
    expect(html).toMatch(/<html/i);
    // No absolute http(s) URL to another host anywhere in the page.
    const absolute = [...html.matchAll(/(?:https?:)?\/\/[a-z0-9.-]+(?::\d+)?/gi)].map((m) => m[0]);
    const foreign = absolute.filter((url) => !/^(https?:)?\/\/localhost(:3999)?$/i.test(url));
    expect(foreign).toEqual([]);

    const assets = [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(2);
    for (const asset of assets) {
      const url = new URL(asset, 'http://localhost/docs/');
      expect(url.host, asset).toBe('localhost');
      const fetched = await h.app.inject({ url: url.pathname });
      expect(fetched.statusCode, asset).toBe(200);
      expect(fetched.body.length, asset).toBeGreaterThan(0);
    }
  });

  it('loads the service’s own document, without an outside validator', async () => {
    const init = await h.app.inject({ url: '/docs/static/swagger-initializer.js' });
    expect(init.statusCode).toBe(200);
    expect(init.body).toMatch(/validatorUrl:\s*null/);
    expect(init.body).toMatch(/url:\s*resolveUrl\('\.\/json'\)/);
    const served = await apiGet(h.app, '/docs/json');
    expect(served.status).toBe(200);
    expect(served.body.info.version).toBe('1.0.0');
    expect(Object.keys(served.body.paths).sort()).toEqual(Object.keys(doc.paths).sort());
  });
});
