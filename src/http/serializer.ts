import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifySerializerCompiler } from 'fastify';
import fastJson from 'fast-json-stringify';
import { z } from 'zod';

export type Serialize = (data: unknown) => string;
type JsonSchema = Record<string, unknown>;

/** Compiled serialisers by the JSON text of their schema: routes and apps share them. */
const compiled = new Map<string, Serialize>();

/** An app's serialiser compiler, and how to compile every serialiser it handed out. */
export interface ResponseSerializers {
  compiler: FastifySerializerCompiler<unknown>;
  /**
   * Compiles the serialisers not compiled yet, one per turn of the event loop. A serving node
   * runs it before it listens: compiled on a route's first answer under load, a schema held the
   * loop long enough to stall every other request.
   */
  compileAll(): Promise<void>;
}

/**
 * Answers are written by a function compiled from the route's zod response schema
 * (fast-json-stringify over its JSON Schema): only declared fields go out, in the schema's order,
 * as zod's encode did before `JSON.stringify`, at a fraction of the cost
 * (docs/decisions/0003-compiled-serializer.md). A schema is compiled on its route's first answer,
 * or by `compileAll`, so building an app (as the tests do, hundreds of times) costs nothing.
 */
export function responseSerializers(compileSchema: (schema: z.ZodType) => Serialize = compileSerializer): ResponseSerializers {
  const uncompiled = new Set<() => Serialize>();
  return {
    compiler: ({ schema }) => {
      if (!(schema instanceof z.ZodType)) throw new TypeError('a response schema must be a zod schema');
      let serialize: Serialize | undefined;
      const compileNow = () => {
        uncompiled.delete(compileNow);
        return (serialize ??= compileSchema(schema));
      };
      uncompiled.add(compileNow);
      return (data: unknown) => (serialize ?? compileNow())(data);
    },
    async compileAll() {
      for (const compileNow of [...uncompiled]) {
        compileNow();
        await nextTurn();
      }
    },
  };
}

/** The serialiser of a zod response schema (shared with any earlier schema of the same JSON Schema). */
export function compileSerializer(schema: z.ZodType): Serialize {
  const jsonSchema = simpleNullables(z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema);
  const text = JSON.stringify(jsonSchema);
  let serialize = compiled.get(text);
  if (!serialize) {
    serialize = fastJson(jsonSchema);
    compiled.set(text, serialize);
  }
  return serialize;
}

const isNull = (branch: unknown) => {
  const node = branch as JsonSchema;
  return node.type === 'null' && Object.keys(node).length === 1;
};

/**
 * zod writes `.nullable()` as `anyOf: [X, {type: 'null'}]`, which fast-json-stringify resolves
 * by validating every value against each branch; a scalar X becomes `type: [X, 'null']` instead,
 * which it checks with `typeof`, far faster than the unions.
 */
function simpleNullables(node: unknown): JsonSchema {
  if (Array.isArray(node)) return node.map(simpleNullables) as unknown as JsonSchema;
  if (node === null || typeof node !== 'object') return node as JsonSchema;
  const out: JsonSchema = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, simpleNullables(value)]));
  const branches = out.anyOf;
  if (Array.isArray(branches) && branches.length === 2 && branches.some(isNull)) {
    const other = branches.find((branch) => !isNull(branch)) as JsonSchema | undefined;
    if (other && typeof other.type === 'string' && other.type !== 'object' && other.type !== 'array') {
      delete out.anyOf;
      Object.assign(out, other, { type: [other.type, 'null'] });
    }
  }
  return out;
}
