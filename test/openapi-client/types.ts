/**
 * Compile-time checks of the generated types: tsc fails when the document describes a shape
 * other than the interface's (each `@ts-expect-error` must meet an error).
 */
import type { components, paths } from 'anchorage-openapi';

type Schemas = components['schemas'];
type PatchBody = NonNullable<paths['/api/v1/articles/{id}']['patch']['requestBody']>['content']['application/json'];
type StatsQuery = NonNullable<paths['/api/v1/sites/{id}/stats']['get']['parameters']['query']>;

export const patch: PatchBody = { title: 'New title', replacements: [{ find: 'twice a year', replace: 'every six months', all: true }] };
// @ts-expect-error a misspelt field is not part of a write body
export const misspelt: PatchBody = { meta_descripton: 'Twice a year.' };
// @ts-expect-error a replacement needs its find
export const findless: PatchBody = { replacements: [{ replace: 'x' }] };

export const status: Schemas['Article']['status'] = 'scheduled';
// @ts-expect-error statuses are the four of the interface
export const unknownStatus: Schemas['Article']['status'] = 'deleted';

export const category: Schemas['Backlink']['category'] = 'local';
export const period: StatsQuery = { period: '2026-10', from: '2026-10-01', to: '2026-10-31' };

// One component per shape: no input twin of any resource.
// @ts-expect-error SiteInput is not generated
export type NoSiteInput = Schemas['SiteInput'];
// @ts-expect-error ArticleWithBodyInput is not generated
export type NoArticleInput = Schemas['ArticleWithBodyInput'];

// The 304 of GET article has no body; its 200 carries the ETag header.
type GetArticle = paths['/api/v1/articles/{id}']['get'];
export const notModified: GetArticle['responses'][304]['content'] = undefined as never;
export const etagHeader: GetArticle['responses'][200]['headers']['ETag'] = '"a42-v3"';
