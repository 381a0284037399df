import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { apiGet, articleFields, articleWithBodyFields, backlinkFields, siteFields, statsFields } from '../helpers/fixtures.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
let h: Harness;
let doc: any;

beforeAll(async () => {
  h = await startHarness();
  const res = await apiGet(h.app, '/api/v1/openapi.json');
  expect(res.status).toBe(200);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  doc = res.body;
});

afterAll(async () => {
  await h?.close();
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

describe('/docs', () => {
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
