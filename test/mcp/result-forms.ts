import { expect } from 'vitest';

interface SuccessResult {
  content: unknown[];
  structuredContent?: unknown;
}

/**
 * A success's text form against its structuredContent: the same JSON, except that a window of a
 * body and its outline are not repeated; the text names where they are.
 */
export function expectTextForm(result: SuccessResult, label = ''): void {
  const [first] = result.content as { type: string; text: string }[];
  expect(first?.type, label).toBe('text');
  const structured = result.structuredContent as { data?: { body?: string }; meta?: { body_offset?: number; outline?: unknown[] } };
  const text = JSON.parse(first!.text) as typeof structured;
  if (structured.meta?.body_offset !== undefined) {
    expect(text.data!.body, label).toBe(`(${[...structured.data!.body!].length} characters of the body: structuredContent.data.body)`);
    text.data!.body = structured.data!.body;
    if (structured.meta.outline) {
      expect(text.meta!.outline, label).toBe(`(${structured.meta.outline.length} headings: structuredContent.meta.outline)`);
      text.meta!.outline = structured.meta.outline;
    }
  }
  expect(text, label).toEqual(structured);
}
