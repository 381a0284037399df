import { parse } from 'fast-querystring';

/**
 * An `application/x-www-form-urlencoded` body's fields, as @fastify/formbody gave them
 * (fast-querystring): a repeated name gives an array, and the object has no prototype.
 */
export function parseForm(text: string): Record<string, string | string[]> {
  return Object.assign(Object.create(null) as Record<string, string | string[]>, parse(text));
}
