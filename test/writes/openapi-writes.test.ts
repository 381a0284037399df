import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
const h = useHarness();
let doc: any;

beforeAll(async () => {
  const res = await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});

const writes = {
  updateArticle: ['put', '/api/v1/articles/{id}'],
  editArticle: ['patch', '/api/v1/articles/{id}'],
  replaceFeaturedImage: ['post', '/api/v1/articles/{id}/featured-image'],
} as const;

const op = (name: keyof typeof writes): any => doc.paths[writes[name][1]]?.[writes[name][0]];
const errorRef = '#/components/schemas/Error';
/** A schema, following one `$ref` into components. */
const resolve = (schema: any): any => (schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);

describe('the OpenAPI document: article writes', () => {
  it('still validates as OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    if (!result.valid) console.error(JSON.stringify(result.errors, null, 2));
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it.each(Object.keys(writes) as (keyof typeof writes)[])('has %s on its method and path, authenticated', (name) => {
    const operation = op(name);
    expect(operation, name).toBeDefined();
    expect(operation.operationId).toBe(name);
    expect(operation.security).toEqual(expect.arrayContaining([{ bearerKey: [] }, { headerKey: [] }]));
    const id = operation.parameters.find((p: any) => p.in === 'path' && p.name === 'id');
    expect(id).toMatchObject({ required: true, schema: { type: 'integer' } });
    for (const header of ['if-match', 'idempotency-key']) {
      expect(operation.parameters.find((p: any) => p.in === 'header' && p.name === header), `${name} ${header}`).toBeDefined();
    }
  });

  it('documents the error responses where they apply, each with the Error body', () => {
    const expected: Record<keyof typeof writes, { has: string[]; not: string[] }> = {
      updateArticle: { has: ['400', '401', '403', '404', '412', '413', '415', '422', '429'], not: ['409'] },
      editArticle: { has: ['400', '401', '403', '404', '409', '412', '413', '415', '422', '429'], not: [] },
      replaceFeaturedImage: { has: ['400', '401', '403', '404', '412', '413', '415', '422', '429'], not: ['409'] },
    };
    for (const [name, { has, not }] of Object.entries(expected) as [keyof typeof writes, { has: string[]; not: string[] }][]) {
      const responses = op(name).responses;
      for (const status of has) {
        expect(responses[status], `${name} ${status}`).toBeDefined();
        expect(responses[status].content['application/json'].schema.$ref, `${name} ${status}`).toBe(errorRef);
        expect(responses[status].description.length, `${name} ${status}`).toBeGreaterThan(0);
      }
      for (const status of not) expect(responses[status], `${name} ${status}`).toBeUndefined();
    }
    expect(op('editArticle').responses['409'].description).toContain('replacement_failed');
    expect(op('updateArticle').responses['412'].description).toContain('precondition_failed');
    expect(op('updateArticle').responses['413'].description).toContain('payload_too_large');
    expect(op('updateArticle').responses['415'].description).toContain('unsupported_media_type');
    expect(op('updateArticle').responses['429'].description).toContain('edit_limit_exceeded');
  });

  it('lists every write error id in the Error schema, with failures, fields, protected_links and limit', () => {
    const error = doc.components.schemas.Error;
    expect(error.properties.error.enum).toEqual(
      expect.arrayContaining([
        'replacement_failed', 'precondition_failed', 'payload_too_large', 'unsupported_media_type', 'validation_failed',
        'protected_links_violation', 'unsupported_image', 'image_too_large', 'idempotency_key_reused', 'rate_limited',
        'edit_limit_exceeded', 'invalid_json', 'forbidden', 'insufficient_scope',
      ]),
    );
    for (const member of ['failures', 'fields', 'protected_links', 'limit']) expect(error.properties[member], member).toBeDefined();
    const failure = resolve(error.properties.failures.items);
    expect(failure.required).toEqual(['index', 'matches']);
  });

  it('PUT takes body (required), title ≤ 255, reason ≤ 2000, ?dry_run; answers ArticleWrite', () => {
    const operation = op('updateArticle');
    const schema = resolve(operation.requestBody.content['application/json'].schema);
    expect(Object.keys(operation.requestBody.content)).toEqual(['application/json']);
    expect(schema.required).toEqual(['body']);
    expect(schema.properties.body.type).toBe('string');
    expect(schema.properties.title.maxLength).toBe(255);
    expect(schema.properties.reason.maxLength).toBe(2000);
    expect(schema.properties.word_count).toBeUndefined();
    const dryRun = operation.parameters.find((p: any) => p.in === 'query' && p.name === 'dry_run');
    expect(dryRun.schema.enum).toEqual(['true', 'false']);
    const ok = resolve(operation.responses['200'].content['application/json'].schema);
    expect(ok.properties.data.$ref).toBe('#/components/schemas/ArticleWithBody');
    expect(ok.properties.meta.required).toEqual(['sanitized']);
    expect(ok.properties.meta.properties.dry_run.type).toBe('boolean');
  });

  it('PATCH takes title, meta_description ≤ 500, up to 50 replacements {find (non-empty), replace, all}, reason, ?dry_run', () => {
    const operation = op('editArticle');
    const schema = resolve(operation.requestBody.content['application/json'].schema);
    expect(Object.keys(schema.properties).sort()).toEqual(['meta_description', 'reason', 'replacements', 'title']);
    expect(schema.required ?? []).toEqual([]);
    expect(schema.properties.title.maxLength).toBe(255);
    expect(schema.properties.meta_description.maxLength).toBe(500);
    expect(schema.properties.replacements.maxItems).toBe(50);
    const item = resolve(schema.properties.replacements.items);
    expect(item.required).toEqual(['find']);
    expect(item.properties.find.minLength).toBe(1);
    expect(item.properties.replace.type).toBe('string');
    expect(item.properties.all.type).toBe('boolean');
    expect(operation.parameters.find((p: any) => p.in === 'query' && p.name === 'dry_run')).toBeDefined();
    expect(resolve(operation.responses['200'].content['application/json'].schema).properties.data.$ref).toBe(
      '#/components/schemas/ArticleWithBody',
    );
  });

  it('featured-image takes application/json (url required) and multipart/form-data (image binary, url, reason); answers an Article', () => {
    const operation = op('replaceFeaturedImage');
    const content = operation.requestBody.content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'multipart/form-data']);
    const json = resolve(content['application/json'].schema);
    expect(json.required).toEqual(['url']);
    expect(json.properties.url).toMatchObject({ type: 'string', format: 'uri' });
    expect(json.properties.image).toBeUndefined();
    const form = resolve(content['multipart/form-data'].schema);
    expect(form.properties.image).toMatchObject({ type: 'string', format: 'binary' });
    expect(form.properties.url).toMatchObject({ type: 'string', format: 'uri' });
    expect(form.properties.reason.maxLength).toBe(2000);
    // No dry run for images.
    expect(operation.parameters.find((p: any) => p.in === 'query' && p.name === 'dry_run')).toBeUndefined();
    const ok = resolve(operation.responses['200'].content['application/json'].schema);
    expect(ok.properties.data.$ref).toBe('#/components/schemas/Article');
    expect(doc.components.schemas.Article.properties.body).toBeUndefined();
  });
});
