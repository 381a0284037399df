import { readOperations } from './read.js';
import type { Operation } from './types.js';

/** Every public operation; REST, OpenAPI and MCP are generated from this list. */
export const operations: readonly Operation[] = [...readOperations];
