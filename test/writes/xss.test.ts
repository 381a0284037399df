import { Parser } from 'htmlparser2';
import { beforeAll, describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import { unsafeParts, xssVectors } from '../fixtures/xss-vectors.js';
import { BACKLINK, INTERNAL, newKey, patch, put, type SeededArticle, seedArticle, send } from '../helpers/write-fixtures.js';

/**
 * Every known XSS vector through the HTTP write surface: as a whole PUT body and inserted by a
 * PATCH replacement. The stored body (read back with GET) is re-parsed: nothing executable may
 * remain, and the protected links must survive.
 */

const h = useHarness();
let article: SeededArticle;
let key = '';
let requestsOnKey = 0;
let writesToday = 0;

const ALLOWED = new Set([
  'p', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'a', 'strong', 'em', 'b', 'i', 'u', 's',
  'sub', 'sup', 'blockquote', 'code', 'pre', 'br', 'hr', 'img', 'figure', 'figcaption', 'table',
  'thead', 'tbody', 'tr', 'th', 'td', 'span',
]);
const URL_ATTRIBUTES = new Set(['href', 'src', 'xlink:href', 'action', 'formaction', 'background', 'poster', 'srcset']);

/** Everything executable in `html`, as a browser would read it: elements, handlers, URL schemes. */
function executableParts(html: string): string[] {
  const problems: string[] = [];
  new Parser(
    {
      onopentag(name, attribs) {
        if (!ALLOWED.has(name)) problems.push(`element <${name}>`);
        for (const [attribute, value] of Object.entries(attribs)) {
          if (/^on/i.test(attribute)) problems.push(`handler ${attribute} on <${name}>`);
          if (attribute === 'style') problems.push(`style on <${name}>`);
          if (URL_ATTRIBUTES.has(attribute)) {
            // htmlparser2 has decoded entities; a browser also ignores white space and controls.
            const compact = value.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase();
            if (/^(javascript|data|vbscript|livescript):/.test(compact)) problems.push(`${compact.split(':')[0]}: URL in ${name}[${attribute}]`);
          }
        }
      },
      oncomment: () => problems.push('comment'),
      onprocessinginstruction: (name) => problems.push(`declaration ${name}`),
    },
    { decodeEntities: true },
  ).end(html);
  return problems;
}

/** A key with room left in its 60 requests a minute. */
async function keyFor(requests: number): Promise<string> {
  if (key === '' || requestsOnKey + requests > 55) {
    key = (await newKey(h.services, article.customer.userId)).key;
    requestsOnKey = 0;
  }
  requestsOnKey += requests;
  return key;
}

/** Stays under the 200 writes a day: the counter is reset between batches (setup, not under test). */
async function roomForWrites(writes: number): Promise<void> {
  if (writesToday + writes > 190) {
    await h.services.db.kysely.deleteFrom('edit_counts').where('account_id', '=', article.customer.accountId).execute();
    writesToday = 0;
  }
  writesToday += writes;
}

const links = `<p>Read the ${BACKLINK} and ${INTERNAL}.</p>`;
const slot = '<p>SLOT</p>';

async function storedBody(k: string): Promise<string> {
  const res = await send(h.app, 'GET', `/api/v1/articles/${article.articleId}`, k);
  expect(res.status).toBe(200);
  expect(res.body.data.protected_links).toHaveLength(2);
  return res.body.data.body;
}

beforeAll(async () => {
  article = await seedArticle(h.services, { body: links + slot });
});

describe('XSS vectors through the write API', () => {
  it('uses the fixture of at least 100 known vectors', () => {
    expect(xssVectors.length).toBeGreaterThanOrEqual(100);
  });

  it('the checker finds what it must (sanity check on raw vectors)', () => {
    expect(executableParts('<img src=x onerror=alert(1)>')).toContain('handler onerror on <img>');
    expect(executableParts('<a href="&#106;ava&#x09;script:alert(1)">x</a>')).toContain('javascript: URL in a[href]');
    expect(executableParts('<a href=" DATA:text/html,x">x</a>')).toContain('data: URL in a[href]');
    expect(executableParts('<svg><script>alert(1)</script></svg>')).toEqual(['element <svg>', 'element <script>']);
    expect(executableParts(`${links}<p>ok</p>`)).toEqual([]);
  });

  it.each(xssVectors.map((vector, index) => [index, vector] as const))('vector %i via PUT and PATCH: %j', async (_index, vector) => {
    await roomForWrites(2);
    const k = await keyFor(4);

    // PUT: the vector as (the rest of) the body.
    const putRes = await put(h, article.articleId, k, { body: links + slot + vector });
    expect(putRes.status, putRes.text).toBe(200);
    const afterPut = await storedBody(k);
    expect(executableParts(afterPut)).toEqual([]);
    expect(unsafeParts(afterPut)).toEqual([]);
    expect(afterPut.startsWith(links + slot)).toBe(true);

    // PATCH: a replacement inserting the vector into the stored body.
    const patchRes = await patch(h, article.articleId, k, { replacements: [{ find: 'SLOT', replace: `SL${vector}OT` }] });
    expect(patchRes.status, patchRes.text).toBe(200);
    const afterPatch = await storedBody(k);
    expect(executableParts(afterPatch)).toEqual([]);
    expect(unsafeParts(afterPatch)).toEqual([]);
    expect(afterPatch.startsWith(`${links}<p>SL`)).toBe(true);

    // Back to a body with the slot for the next vector, under the service: it forgets the answer it
    // keeps, as it does for its own edits (it hears of other writers' within 100 ms).
    await h.services.db.kysely.updateTable('articles').set({ body: links + slot }).where('id', '=', article.articleId).execute();
    h.services.articles.changed();
  });
});
