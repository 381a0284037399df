import { describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import { articleRow, BACKLINK, patch, seedArticle, send } from '../helpers/write-fixtures.js';

/** A failed PATCH replacement says how to fix it: the near-match, or the occurrences. */

const h = useHarness();

const BODY = `<h2>Care &amp; cleaning</h2><p>Brush   twice a day with a soft brush.</p><p>See a ${BACKLINK} yearly.</p><p>A brush, a brush, a brush.</p>`;

describe('replacement_failed failures (REST)', () => {
  it('no match: the near-match ignoring case, white space and entities, with the exact body text and offset', async () => {
    const a = await seedArticle(h.services, { body: BODY });
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [{ find: 'care & cleaning' }, { find: 'brush TWICE a day' }, { find: 'Brush twise a day with a sotf brush' }, { find: 'zebra crossings at night' }],
    });
    expect(res.status).toBe(409);
    const body = res.body as { failures: { index: number; matches: number; near_match?: { offset: number; length: number; text: string; equivalent: boolean } }[] };
    expect(body.failures).toEqual([
      { index: 0, matches: 0, near_match: { offset: 4, length: 19, text: 'Care &amp; cleaning', equivalent: true } },
      { index: 1, matches: 0, near_match: { offset: 31, length: 19, text: 'Brush   twice a day', equivalent: true } },
      { index: 2, matches: 0, near_match: { offset: 31, length: 37, text: 'Brush   twice a day with a soft brush', equivalent: false } },
      { index: 3, matches: 0 },
    ]);
    for (const failure of body.failures.slice(0, 3)) {
      const { offset, length, text } = failure.near_match!;
      expect(Array.from(BODY).slice(offset, offset + length).join('')).toBe(text);
    }
    // Sent back as find, the near-match text works.
    const fixed = await patch(h, a.articleId, a.customer.key, { replacements: [{ find: body.failures[2]!.near_match!.text, replace: 'Brush twice a day.' }] });
    expect(fixed.status).toBe(200);
  });

  it('several matches: the count, and the offsets and surroundings of the first five, on the body as the item met it', async () => {
    const a = await seedArticle(h.services, { body: BODY });
    const res = await patch(h, a.articleId, a.customer.key, {
      replacements: [{ find: 'A brush, ', replace: 'One brush, ' }, { find: 'a brush' }],
    });
    expect(res.status).toBe(409);
    // After item 0, the body holds "One brush, a brush, a brush.": item 1 meets two matches there.
    const at = Array.from(BODY.slice(0, BODY.indexOf('A brush, '))).length;
    expect(res.body.failures).toEqual([
      {
        index: 1,
        matches: 2,
        occurrences: [
          { offset: at + 11, before: expect.stringMatching(/partner page<\/a> yearly\.<\/p><p>One brush, $/), after: ', a brush.</p>' },
          { offset: at + 20, before: expect.stringMatching(/<p>One brush, a brush, $/), after: '.</p>' },
        ],
      },
    ]);
    expect(res.body.failures[0].occurrences[0].before).toHaveLength(60);
    expect((await articleRow(h, a.articleId)).body).toBe(BODY);
  });

  it('documents the new fields in the OpenAPI document', async () => {
    const doc = (await send(h.app, 'GET', '/api/v1/openapi.json', undefined)).body as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
    expect(Object.keys(doc.components.schemas.ReplacementFailure!.properties)).toEqual(['index', 'matches', 'near_match', 'occurrences']);
    expect(JSON.stringify(doc.components.schemas.Error)).toContain('ReplacementFailure');
  });
});
