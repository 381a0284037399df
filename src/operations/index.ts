import { z } from 'zod';
import { getArticleTool } from './article-window.js';
import { readOperations } from './read.js';
import { runOperation } from './run.js';
import { siteTextOperations } from './site-text.js';
import { writeOperations, writeTools } from './writes.js';
import type { Operation, ToolDefinition } from './types.js';

/** Every public operation; REST, OpenAPI and MCP are generated from this list. */
export const operations: readonly Operation[] = [...readOperations, ...writeOperations, ...siteTextOperations];

/** The MCP tool of an operation: the same input (less REST-only fields, strict), output, scope and pipeline. */
const toolOf = (operation: Operation & { tool: NonNullable<Operation['tool']> }): ToolDefinition => ({
  name: operation.tool.name,
  title: operation.tool.title,
  description: operation.tool.description,
  annotations: operation.tool.annotations,
  input: z.strictObject(
    Object.fromEntries(Object.entries(operation.input.shape).filter(([field]) => !(operation.tool.restOnly ?? []).includes(field))),
  ),
  output: operation.output,
  scope: operation.scope,
  operation: operation.name,
  run: (input, ctx) => runOperation(operation, input, ctx),
});

/** Tools declared in place of the one their operation would give (get_article reads the body in windows). */
const declaredTools = new Map([getArticleTool].map((tool) => [tool.name, tool]));

/** The tools of the operations that have one. */
const operationTools = operations.flatMap((operation) =>
  operation.tool ? [declaredTools.get(operation.tool.name) ?? toolOf({ ...operation, tool: operation.tool })] : [],
);

/** Every MCP tool, in the order the interface lists them: the reading tools, then the seed's write tools, then the others. */
export const tools: readonly ToolDefinition[] = [
  ...operationTools.filter((tool) => tool.annotations.readOnlyHint),
  ...writeTools,
  ...operationTools.filter((tool) => !tool.annotations.readOnlyHint),
];
