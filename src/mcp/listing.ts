/**
 * What tools/list says of each tool: its name, title, description, annotations and JSON Schemas.
 * The list is read by a model at the start of every conversation, so it says what a model needs
 * and no more: inputs keep their descriptions and rules (the model fills them in) but not their
 * examples, the storage's integer bounds (2^53 − 1, a 32-bit id) or a `$schema` (2020-12 is MCP's default); outputs
 * name their members, `data` and `meta` (the tool's description tells what they hold; the REST
 * answer's fields are in the OpenAPI document). Computed once per tool: the declarations never change.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ToolDefinition } from '../operations/types.js';

type Schema = Record<string, unknown>;

/** Keys of a schema that hold schemas: one, a list, or a map by name. */
const oneSchema = ['items', 'additionalProperties', 'not', 'contains', 'propertyNames'];
const schemaList = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const schemaMap = ['properties', '$defs', 'patternProperties'];

/** Upper bounds that are the storage's, not a rule a caller needs: JSON's safe integers, a 32-bit id. */
const storageBounds = new Set<unknown>([Number.MAX_SAFE_INTEGER, 2 ** 31 - 1]);

/** Examples: the descriptions say enough. */
const examples = new Set(['examples', 'example']);

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An input schema without what a listing need not say (see the file's comment). */
function compact(schema: Schema): Schema {
  const kept: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' || examples.has(key)) continue;
    if ((key === 'minimum' && value === Number.MIN_SAFE_INTEGER) || (key === 'maximum' && storageBounds.has(value))) continue;
    if (oneSchema.includes(key) && isSchema(value)) kept[key] = compact(value);
    else if (schemaList.includes(key) && Array.isArray(value)) kept[key] = value.map((item) => (isSchema(item) ? compact(item) : item));
    else if (schemaMap.includes(key) && isSchema(value)) {
      kept[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, isSchema(item) ? compact(item) : item]));
    } else kept[key] = value;
  }
  return kept;
}

/**
 * An output schema's outline to `levels` levels: the root's members (data, meta), each member's own
 * schema left open. Named schemas are inlined. Enough for a client to check the result; with the
 * fields of nine tools the list passed its 12,000 characters.
 */
function outlineOf(schema: Schema, defs: Record<string, unknown>, levels: number): Schema {
  const ref = typeof schema.$ref === 'string' ? defs[schema.$ref.replace('#/$defs/', '')] : undefined;
  if (isSchema(ref)) return outlineOf(ref, defs, levels);
  if (levels === 0) return {};
  if (isSchema(schema.items)) return { type: 'array', items: outlineOf(schema.items, defs, levels) };
  if (!isSchema(schema.properties)) return {};
  const properties = Object.entries(schema.properties).map(([name, field]) => [name, isSchema(field) ? outlineOf(field, defs, levels - 1) : {}]);
  return { type: 'object', properties: Object.fromEntries(properties) };
}

/** A tool schema as JSON Schema; a named schema is a root `$ref`, which MCP wants typed as the object it is. */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Tool['inputSchema'] {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io });
  if (io === 'output') return { ...outlineOf(json, isSchema(json.$defs) ? json.$defs : {}, 1), type: 'object' };
  return { ...compact(json as Schema), type: 'object' };
}

const listings = new Map<ToolDefinition, Tool>();

/** The listing of `tool`. */
export function listingOf(tool: ToolDefinition): Tool {
  let listing = listings.get(tool);
  if (!listing) {
    listing = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: jsonSchemaOf(tool.input, 'input'),
      outputSchema: jsonSchemaOf(tool.output, 'output'),
      annotations: tool.annotations,
    };
    listings.set(tool, listing);
  }
  return listing;
}

/** The listing for a client of protocol 2025-03-26: no outputSchema, and the title among the annotations. */
export function legacyListingOf(tool: ToolDefinition): Tool {
  const { name, description, inputSchema, annotations } = listingOf(tool);
  return { name, description, inputSchema, annotations: { title: tool.title, ...annotations } };
}
