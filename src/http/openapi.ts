import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Settings } from '../config.js';

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

/** The OpenAPI 3.1 document, generated from the routes that the operation list created. */
export const openApiPlugin = fp(async (app: FastifyInstance, options: { settings: Settings }) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Anchorage API',
        version: '1.0.0',
        description:
          'Read the websites, articles, backlinks and period statistics of your account, and edit article content without ever breaking the protected links the service inserted. Every call is stored in the activity log; every change is a revision.',
      },
      servers: [{ url: options.settings.publicUrl }],
      components: {
        securitySchemes: {
          bearerKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
          headerKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
    transform,
    transformObject: jsonSchemaTransformObject,
  });
});

/** getOpenApi, and the interactive reference at /docs, served from the service's own assets. */
export async function openApiRoutes(app: FastifyInstance) {
  app.get(
    '/api/v1/openapi.json',
    {
      schema: {
        operationId: 'getOpenApi',
        summary: 'The OpenAPI 3.1 document of this API',
        description: 'Returns this machine-readable description. No authentication is required.',
        tags: ['Meta'],
        security: [],
      },
    },
    async () => app.swagger(),
  );
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    staticCSP: true,
    transformSpecificationClone: true,
  });
}
