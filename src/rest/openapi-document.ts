/**
 * Whole-document finishing of the generated OpenAPI document: one component per shape, and the
 * response headers the service sends. Rules over the whole document rather than per operation,
 * so an operation added to the list is documented the same way without touching this file.
 */

type Json = Record<string, unknown>;
type Operation = Json & { security?: unknown[]; responses?: Record<string, Json>; 'x-etag'?: boolean };

const schemaRef = '#/components/schemas/';
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The headers a response may carry, each described once and referenced. */
export const responseHeaders = {
  'X-Request-Id': {
    description:
      'The id of this request, also in the log lines and the activity record: a sane incoming `X-Request-Id` (1 to 64 of `A-Z a-z 0-9 . _ -`) is kept, else a new UUID.',
    schema: { type: 'string', example: '6f1c2a9e-3b7d-4e0a-9c51-2d8f7a4b1e03' },
  },
  ETag: {
    description:
      'Strong validator of the article’s stored state. Send it as `If-Match` on a write (stale: 412), or as `If-None-Match` on GET (unchanged: 304).',
    schema: { type: 'string', example: '"a42-v3"' },
  },
  'X-RateLimit-Limit': {
    description: 'Requests allowed per one-minute window for this key.',
    schema: { type: 'integer', example: 60 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'integer', example: 59 },
  },
  'X-RateLimit-Reset': {
    description: 'Unix time (seconds) at which the current window ends.',
    schema: { type: 'integer', example: 1793520060 },
  },
  'RateLimit-Policy': {
    description:
      'The limits as IETF RateLimit-Policy items: `"default";q=60;w=60` per key, and on writes also `"edits";q=200;w=86400`, the daily edit allowance of the account.',
    schema: { type: 'string', example: '"default";q=60;w=60' },
  },
  RateLimit: {
    description: 'What is left of each policy, as IETF RateLimit items: `r` remaining, `t` seconds until the window resets.',
    schema: { type: 'string', example: '"default";r=59;t=42' },
  },
  'Retry-After': {
    description: 'Seconds to wait before the request can succeed.',
    schema: { type: 'integer', example: 30 },
  },
} satisfies Record<string, Json>;

const limitHeaders = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];

/** Every `$ref` string in a value. */
function refsIn(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found);
  else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') found.add(child);
      else refsIn(child, found);
    }
  }
  return found;
}

/** A copy of `value` with each `$ref` renamed by `rename`. */
function renameRefs<T>(value: T, rename: (ref: string) => string): T {
  return JSON.parse(JSON.stringify(value), (key, child) => (key === '$ref' && typeof child === 'string' ? rename(child) : child)) as T;
}

/**
 * One component per shape. The zod transform emits every registered schema twice, as it reads
 * (`SiteInput`) and as it writes (`Site`), whether used or not: keep the schemas reachable from
 * the operations, and give a request-only one its plain name.
 */
export function componentsInUse(document: Json): Json {
  const components = document.components as Json & { schemas?: Record<string, Json> };
  const schemas = components.schemas ?? {};
  const { components: _all, ...outside } = document;
  const reachable = new Set<string>();
  let frontier = [...refsIn(outside), ...refsIn({ ...components, schemas: {} })];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const ref of frontier) {
      const name = ref.startsWith(schemaRef) ? ref.slice(schemaRef.length) : undefined;
      if (name === undefined || reachable.has(name) || !schemas[name]) continue;
      reachable.add(name);
      next.push(...refsIn(schemas[name]));
    }
    frontier = next;
  }
  const plainName = (name: string) => {
    const plain = name.endsWith('Input') ? name.slice(0, -'Input'.length) : name;
    return plain !== name && !reachable.has(plain) ? plain : name;
  };
  const rename = (ref: string) => (ref.startsWith(schemaRef) ? schemaRef + plainName(ref.slice(schemaRef.length)) : ref);
  const kept = Object.fromEntries([...reachable].sort().map((name) => [plainName(name), schemas[name]]));
  return renameRefs({ ...document, components: { ...components, schemas: kept } }, rename);
}

/**
 * A response whose body is a component takes the component's description: fastify-swagger
 * cannot see through the zod transform's `$ref` and would write "Default Response".
 */
export function describeResponses(document: Json): Json {
  const paths = document.paths as Record<string, Record<string, Operation>>;
  const schemas = ((document.components as Json).schemas ?? {}) as Record<string, Json>;
  for (const methods of Object.values(paths)) {
    for (const operation of Object.values(methods)) {
      for (const response of Object.values(operation.responses ?? {})) {
        const ref = (response.content as Record<string, { schema?: { $ref?: string } }> | undefined)?.['application/json']?.schema?.$ref;
        const description = ref?.startsWith(schemaRef) ? schemas[ref.slice(schemaRef.length)]?.description : undefined;
        if (response.description === 'Default Response' && typeof description === 'string') response.description = description;
      }
    }
  }
  return document;
}

/**
 * The headers each response carries: `X-Request-Id` on all; the rate-limit headers on every
 * answer to an authenticated request that got past authentication (a 503 is shed before it);
 * `Retry-After` on 429 and 503; `ETag` on the answers of operations that send one (marked
 * `x-etag` by the REST routes).
 */
export function documentHeaders(document: Json): Json {
  const paths = document.paths as Record<string, Record<string, Operation>>;
  const used = new Set<string>();
  for (const methods of Object.values(paths)) {
    for (const operation of Object.values(methods)) {
      const authenticated = (operation.security ?? []).length > 0;
      const sendsETag = operation['x-etag'] === true;
      delete operation['x-etag'];
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const names = [
          'X-Request-Id',
          ...(sendsETag && (status === '200' || status === '304') ? ['ETag'] : []),
          ...(authenticated && status !== '401' && status !== '503' ? limitHeaders : []),
          ...(status === '429' || status === '503' ? ['Retry-After'] : []),
        ];
        for (const name of names) used.add(name);
        response.headers = Object.fromEntries(names.map((name) => [name, headerRef(name)]));
      }
    }
  }
  const components = document.components as Json;
  const headers = Object.fromEntries(Object.entries(responseHeaders).filter(([name]) => used.has(name)));
  return { ...document, components: { ...components, headers } };
}
