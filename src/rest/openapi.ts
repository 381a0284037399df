import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Settings } from '../config.js';
import { componentsInUse, describeResponses, documentHeaders } from './openapi-document.js';
import { errorResponses } from './rest.js';

type RouteDocument = Parameters<typeof jsonSchemaTransform>[0];

/**
 * The zod transform, plus request bodies with several content types (`x-body-content`), which
 * the zod transform does not know: each becomes its own entry of the requestBody.
 */
function transform(document: RouteDocument) {
  const bodies = (document.schema as { 'x-body-content'?: Record<string, z.ZodType> } | undefined)?.['x-body-content'];
  const transformed = jsonSchemaTransform(document);
  if (!bodies) return transformed;
  const { 'x-body-content': _documented, ...schema } = transformed.schema as Record<string, unknown>;
  const content = Object.fromEntries(
    Object.entries(bodies).map(([type, zod]) => [type, { schema: z.toJSONSchema(zod, { io: 'input', target: 'draft-2020-12' }) }]),
  );
  return { ...transformed, schema: { ...schema, body: { content } } };
}

/** The tags the routes use, each with what its operations are for. */
const tags = [
  {
    name: 'Reporting',
    description: 'Read the websites of your account, their articles, backlinks and period statistics. Lists are paged.',
  },
  {
    name: 'Article writes',
    description:
      'Edit an article’s content and featured image. Protected links are never removed or rewritten; every change is a revision and counts against the daily edit allowance.',
  },
  { name: 'Meta', description: 'This description of the API.' },
];

type OpenApiDocument = Parameters<typeof jsonSchemaTransformObject>[0];

/** The zod components, then one component per shape, response descriptions and headers (whole-document rules). */
const transformObject = (document: OpenApiDocument) =>
  documentHeaders(describeResponses(componentsInUse(jsonSchemaTransformObject(document) as Record<string, unknown>))) as ReturnType<
    typeof jsonSchemaTransformObject
  >;

/** The OpenAPI 3.1 document, generated from the routes that the operation list created. */
export const openApiPlugin = fp(async (app: FastifyInstance, options: { settings: Settings }) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Anchorage API',
        version: '1.0.0',
        description:
          'Read the websites, articles, backlinks and period statistics of your account, and edit article content without ever breaking the protected links the service inserted. Every call is stored in the activity log; every change is a revision. A query parameter or body field an operation does not take is refused with 422 `validation_failed` naming it, never ignored.',
        contact: { name: 'Anchorage', url: `${options.settings.publicUrl}/app/connect` },
        license: { name: 'Proprietary: offered to the customers of this service', identifier: 'LicenseRef-Proprietary' },
      },
      tags,
      servers: [{ url: options.settings.publicUrl }],
      components: {
        securitySchemes: {
          bearerKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
          headerKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
    transform,
    transformObject,
  });
});

/**
 * The reference's Content-Security-Policy: everything from the service itself. The one inline
 * style swagger-ui's bundle inserts at start is allowed by its hash (a new swagger-ui version may
 * change it: the /docs browser test then reports the blocked style).
 */
const docsCSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "font-src 'self' data:",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='",
].join('; ');

/**
 * getOpenApi, and the interactive reference at /docs, served from the service's own assets
 * (`assetsDir`, the UI's folder: its anchor, and the reference's style sheet).
 */
export async function openApiRoutes(app: FastifyInstance, options: { assetsDir: string }) {
  app.get(
    '/api/v1/openapi.json',
    {
      schema: {
        operationId: 'getOpenApi',
        summary: 'The OpenAPI 3.1 document of this API',
        description: 'Returns this machine-readable description. No authentication is required.',
        tags: ['Meta'],
        security: [],
        response: {
          200: z
            .looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) })
            .describe('This OpenAPI 3.1 document, as JSON.'),
          ...errorResponses([]),
        },
      },
    },
    async () => app.swagger(),
  );
  const asset = (name: string) => readFileSync(join(options.assetsDir, name));
  const anchor = asset('anchor.svg');
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The service's name and look: its anchor in the top bar and the tab, its colours.
    logo: { type: 'image/svg+xml', content: anchor, href: '/app', target: '_self' },
    theme: {
      title: 'Anchorage API reference',
      favicon: [{ filename: 'anchor.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: anchor }],
      css: [{ filename: 'anchorage.css', content: asset('docs.css').toString('utf8') }],
    },
    uiConfig: { docExpansion: 'list', deepLinking: true },
    staticCSP: docsCSP,
    transformSpecificationClone: true,
  });
}
