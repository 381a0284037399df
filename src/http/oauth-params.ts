/**
 * One parameter of an OAuth request (query or form). A parameter sent twice is treated as
 * missing: RFC 6749 §3.1 forbids repeating them, and guessing which one counts is unsafe.
 */
export function param(source: unknown, name: string): string | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  const value = (source as Record<string, unknown>)[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
