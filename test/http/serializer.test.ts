import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileSerializer, responseSerializers } from '../../src/http/serializer.js';
import { operations } from '../../src/operations/index.js';
import { errorSchema } from '../../src/operations/schemas.js';

// Answers are written by fast-json-stringify compiled from each route's zod schema
// (src/http/serializer.ts). For any value the schema accepts, the text must be exactly what
// zod's encode followed by JSON.stringify gave: the same fields, in the same order, and nothing
// the schema does not declare.

type JsonSchema = Record<string, unknown>;

const serializerOf = (schema: z.ZodType) => responseSerializers().compiler({ schema, method: 'GET', url: '/test', httpStatus: '200' });
const zodText = (schema: z.ZodType, data: unknown) => JSON.stringify(z.encode(schema, data));

/** Values for the subset of JSON Schema zod writes for our answers, with undeclared keys added to every object. */
function valuesOf(node: JsonSchema, root: JsonSchema): fc.Arbitrary<unknown> {
  if (typeof node.$ref === 'string') return valuesOf((root.$defs as Record<string, JsonSchema>)[node.$ref.replace('#/$defs/', '')]!, root);
  if (Array.isArray(node.anyOf)) return fc.oneof(...(node.anyOf as JsonSchema[]).map((branch) => valuesOf(branch, root)));
  if (Array.isArray(node.enum)) return fc.constantFrom(...(node.enum as unknown[]));
  if (node.const !== undefined) return fc.constant(node.const);
  if (Array.isArray(node.type)) return fc.oneof(...(node.type as string[]).map((type) => valuesOf({ ...node, type }, root)));
  switch (node.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: -1e6, max: 1e9 });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 });
    case 'string':
      return node.format === 'date-time' ? fc.date({ noInvalidDate: true }).map((d) => d.toISOString().replace(/\.\d{3}Z$/, 'Z')) : fc.string({ unit: 'binary' });
    case 'array':
      return fc.array(valuesOf(node.items as JsonSchema, root), { maxLength: 4 });
    case 'object': {
      const properties = (node.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((node.required ?? []) as string[]);
      const declared = fc.record(
        Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, valuesOf(value, root)])),
        { requiredKeys: Object.keys(properties).filter((key) => required.has(key)) },
      );
      const extra = node.additionalProperties && typeof node.additionalProperties === 'object' ? valuesOf(node.additionalProperties as JsonSchema, root) : fc.string();
      return fc.tuple(declared, fc.dictionary(fc.constantFrom('undeclared', 'secret_hash', '__proto__x'), extra)).map(([known, unknown]) => ({ ...unknown, ...known }));
    }
    default:
      return fc.jsonValue();
  }
}

const schemas: [string, z.ZodType][] = [...operations.map((operation): [string, z.ZodType] => [operation.name, operation.output]), ['error', errorSchema]];

describe('the compiled answer serialiser', () => {
  it.each(schemas)('writes exactly what zod encode and JSON.stringify wrote (%s)', (_name, schema) => {
    const jsonSchema = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;
    const serialize = serializerOf(schema);
    fc.assert(
      fc.property(valuesOf(jsonSchema, jsonSchema), (data) => {
        fc.pre(z.safeEncode(schema, data).success);
        expect(serialize(data)).toBe(zodText(schema, data));
      }),
      { numRuns: 200 },
    );
  });

  it('leaves out fields the schema does not declare, at any depth', () => {
    const schema = z.object({ id: z.int(), owner: z.object({ name: z.string().nullable() }), rows: z.array(z.object({ n: z.int() })) });
    const text = serializerOf(schema)({ id: 1, key_hash: 'x', owner: { name: null, password: 'y' }, rows: [{ n: 2, token: 'z' }] });
    expect(text).toBe('{"id":1,"owner":{"name":null},"rows":[{"n":2}]}');
  });

  it('refuses an answer that lacks a required field', () => {
    const serialize = serializerOf(z.object({ id: z.int(), title: z.string() }));
    expect(() => serialize({ id: 1 })).toThrow(/title/);
  });

  it('refuses a schema that is not a zod schema', () => {
    expect(() => responseSerializers().compiler({ schema: { type: 'object' }, method: 'GET', url: '/test', httpStatus: '200' })).toThrow(/zod/);
  });

  it('compiles each serialiser once: on its first answer, or before it, by compileAll', async () => {
    const compiled: z.ZodType[] = [];
    const serializers = responseSerializers((schema) => {
      compiled.push(schema);
      return compileSerializer(schema);
    });
    const first = z.object({ a: z.number() });
    const second = z.object({ b: z.string() });
    const answerFirst = serializers.compiler({ schema: first, method: 'GET', url: '/a', httpStatus: '200' });
    const answerSecond = serializers.compiler({ schema: second, method: 'GET', url: '/b', httpStatus: '200' });
    expect(compiled).toEqual([]);
    expect(answerFirst({ a: 1 })).toBe('{"a":1}');
    expect(compiled).toEqual([first]);
    await serializers.compileAll();
    expect(compiled).toEqual([first, second]);
    expect(answerSecond({ b: 'x' })).toBe('{"b":"x"}');
    expect(answerFirst({ a: 2 })).toBe('{"a":2}');
    await serializers.compileAll();
    expect(compiled).toEqual([first, second]);
  });
});
