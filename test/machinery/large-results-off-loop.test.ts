import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Harness, startHarness } from '../helpers/harness.js';
import { longestStallDuring } from '../helpers/loop-watch.js';
import { articleRow, expectUnchanged, revisionsOf, type SeededArticle, seedArticle, snapshot } from '../helpers/write-fixtures.js';
import { manualGrant } from '../helpers/oauth-client.js';

// Heavy work is sized by what it produces. A small PATCH whose
// replacement multiplies the body (one character found everywhere, replaced by 3,000), over REST
// or MCP, dry run or not, and each MCP get_article window of a 4.8 MB body must not hold the
// event loop: both did their work on it.

vi.setConfig({ testTimeout: 120_000 });

/**
 * The longest the event loop may be held during one request, in CPU time of its thread (a shared
 * machine delays every tick: see `longestStallDuring`): generous, and far under what an edit that
 * multiplies a body took on the loop.
 */
const STALL_BOUND_MS = 200;

/**
 * The longest a window may hold the event loop, far under what its work took there. What is left
 * is reading the body (on PostgreSQL, the driver decodes megabytes of it in one turn).
 */
const WINDOW_BOUND_MS = 100;

/** About 5 KB of prose: 1,508 `e`, in its text and, in `<em>`, in its markup. */
const smallBody = '<p>Seventeen green trees <em>screen</em> the deep creek, where the geese feed, breed and sleep.</p>'.repeat(52);

/**
 * `e` replaced by 3,000 characters everywhere, 40 of them elements: 4.5 MB (4.2 MB once the
 * sanitiser removed the `<xm>` tags it makes).
 */
const amplifier = { find: 'e', replace: `<b>x</b>${'x'.repeat(67)}`.repeat(40), all: true };

const run = promisify(execFile);

interface Sent {
  status: number;
  error?: string;
  fields?: Record<string, string[]>;
  meta?: Record<string, unknown>;
  length?: number;
}

/**
 * A REST request sent by another process (the client's own work, reading a 4.5 MB answer, would
 * hold this event loop): its status, error, and its answer's `meta` and body length.
 */
async function sent(h: Harness, method: 'PATCH' | 'PUT', path: string, key: string, payload: unknown): Promise<Sent> {
  const sender = `const r = await fetch(process.argv[1], { method: process.argv[2], headers: { authorization: 'Bearer ' + process.argv[3], 'content-type': 'application/json' }, body: process.argv[4] });
    const answer = await r.json();
    process.stdout.write(JSON.stringify({ status: r.status, error: answer.error, fields: answer.fields, meta: answer.meta, length: answer.data?.body.length }));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', sender, `${h.settings.publicUrl}${path}`, method, key, JSON.stringify(payload)]);
  return JSON.parse(stdout) as Sent;
}

/** An MCP client with a write grant of `email`'s. */
async function mcpClient(h: Harness, email: string): Promise<Client> {
  const { tokens } = await manualGrant(h.settings.publicUrl, email, { access: 'write' });
  const client = new Client({ name: 'loop-watch', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', h.settings.publicUrl), {
      requestInit: { headers: { authorization: `Bearer ${tokens.access_token as string}` } },
    }),
  );
  return client;
}

/**
 * Starts the pool's threads (a thread's start takes the event loop a while, once) with an edit
 * that runs in one, so that what is measured is each request's own work.
 */
async function warmUp(harness: Harness): Promise<void> {
  const a = await seedArticle(harness.services, { body: smallBody });
  // 40 KB: over the size that runs inline.
  expect(await sent(harness, 'PUT', `/api/v1/articles/${a.articleId}?dry_run=true`, a.customer.key, { body: smallBody.repeat(8) })).toMatchObject({ status: 200 });
}

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: { data: { body: string }; meta: Record<string, unknown> };
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ listen: true });
  await warmUp(h);
});
afterAll(async () => {
  await h?.close();
});

describe('an edit whose replacement multiplies a small body', () => {
  it('PATCH with dry_run: the 4.5 MB body is made off the event loop, and nothing is saved', async () => {
    const a = await seedArticle(h.services, { body: smallBody });
    const before = await snapshot(h, a);
    const { result, longestCpu } = await longestStallDuring(() => sent(h, 'PATCH', `/api/v1/articles/${a.articleId}?dry_run=true`, a.customer.key, { replacements: [amplifier] }));
    expect(result).toMatchObject({ status: 200, meta: { dry_run: true } });
    expect(result.length).toBeGreaterThan(4_000_000);
    expect(longestCpu).toBeLessThan(STALL_BOUND_MS);
    await expectUnchanged(h, a, before);
  });

  it('PATCH: saved, off the event loop', async () => {
    const a = await seedArticle(h.services, { body: smallBody });
    const { result, longestCpu } = await longestStallDuring(() => sent(h, 'PATCH', `/api/v1/articles/${a.articleId}`, a.customer.key, { replacements: [amplifier] }));
    expect(result.status).toBe(200);
    expect(result.length).toBeGreaterThan(4_000_000);
    expect(longestCpu).toBeLessThan(STALL_BOUND_MS);
    expect((await articleRow(h, a.articleId)).body).toHaveLength(result.length!);
    expect(await revisionsOf(h, a.articleId)).toHaveLength(2);
  });

  it('MCP update_article, dry run or not: off the event loop, and its result a window of the new body', async () => {
    const a = await seedArticle(h.services, { body: smallBody });
    const client = await mcpClient(h, a.customer.email);
    try {
      for (const dry_run of [true, false]) {
        const { result, longestCpu } = await longestStallDuring(
          async () => (await client.callTool({ name: 'update_article', arguments: { article_id: a.articleId, replacements: [amplifier], dry_run } })) as ToolResult,
        );
        expect(result.isError, result.content[0]?.text).toBeFalsy();
        expect(result.structuredContent?.meta).toMatchObject({ body_offset: 0, next_offset: expect.any(Number) });
        expect(result.structuredContent?.meta.body_total_length).toBeGreaterThan(4_000_000);
        expect(result.structuredContent?.data.body.startsWith(`<p>S${amplifier.replace}v`)).toBe(true);
    expect(longestCpu).toBeLessThan(STALL_BOUND_MS);
      }
      expect(await revisionsOf(h, a.articleId)).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it('one that would make a body longer than an article may hold is refused with 422 naming the item; nothing saved', async () => {
    const a = await seedArticle(h.services, { body: smallBody });
    const before = await snapshot(h, a);
    const { result, longestCpu } = await longestStallDuring(() =>
      sent(h, 'PATCH', `/api/v1/articles/${a.articleId}`, a.customer.key, { replacements: [{ find: 'e', replace: 'x'.repeat(4_000), all: true }] }),
    );
    expect(result).toMatchObject({ status: 422, error: 'validation_failed', fields: { 'replacements.0.replace': ['The body would grow past 5000000 characters.'] } });
    expect(longestCpu).toBeLessThan(STALL_BOUND_MS);
    await expectUnchanged(h, a, before);
  });
});

describe('an edit whose replacement multiplies markup', () => {
  let limited: Harness;
  beforeAll(async () => {
    limited = await startHarness({ listen: true, env: { HTML_TIMEOUT_MS: '300' } });
    await warmUp(limited);
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('is refused at the pool’s time limit (422) without holding the event loop; nothing saved', async () => {
    const a = await seedArticle(limited.services, { body: smallBody });
    const before = await snapshot(limited, a);
    // 500,000 elements: the sanitiser took seconds of the event loop over them, and takes over a
    // second in a pool thread on a quiet machine, several times the limit.
    const elements = { find: 'e', replace: '<b>x</b> '.repeat(333), all: true };
    const { result, longestCpu } = await longestStallDuring(() => sent(limited, 'PATCH', `/api/v1/articles/${a.articleId}?dry_run=true`, a.customer.key, { replacements: [elements] }));
    expect(result).toMatchObject({ status: 422, error: 'validation_failed', fields: { body: [expect.stringMatching(/too complex to process within 0\.3 s/)] } });
    expect(longestCpu).toBeLessThan(STALL_BOUND_MS);
    await expectUnchanged(limited, a, before);
  });
});

/**
 * About 4.8 million characters (5.4 MB of UTF-8): short sections of an <h2> and two <h3> (15,000
 * headings), text of two- to four-byte characters.
 */
function largeBody(): string {
  const filler = `<p>${'Zähne putzen — zweimal täglich 😀, sagt die Zahnärztin. '.repeat(4)}</p>`;
  let body = '';
  for (let s = 1; body.length < 4_800_000; s++) body += `<h2>Part ${s}</h2>${filler}<h3>Tools ${s}</h3>${filler}<h3>Notes &amp; tips ${s}</h3>${filler}`;
  return body;
}

/** Code points of `text`, the unit of every offset and length of a window. */
const codePoints = (text: string): number => {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
};

describe('MCP get_article on a 4.8 MB article', () => {
  let a: SeededArticle;
  let client: Client;
  beforeAll(async () => {
    a = await seedArticle(h.services, { body: largeBody() });
    client = await mcpClient(h, a.customer.email);
    // Unmeasured: the seed's garbage is collected meanwhile.
    await client.callTool({ name: 'get_article', arguments: { article_id: a.articleId } });
  });
  afterAll(async () => {
    await client?.close();
  });

  it('gives windows from the start, the middle and the end, each without holding the event loop', async () => {
    const stored = (await articleRow(h, a.articleId)).body;
    const total = codePoints(stored);
    for (const body_offset of [0, 2_400_000, total - 100]) {
      // The best of three tries: a collection of the test process's whole heap can fall into a
      // turn of any one of them; work done on the loop would be in all three.
      let bestCpu = Infinity;
      for (let attempt = 0; attempt < 3; attempt++) {
        const { result, longestCpu } = await longestStallDuring(
          async () => (await client.callTool({ name: 'get_article', arguments: { article_id: a.articleId, body_offset } })) as ToolResult,
        );
        expect(result.isError, result.content[0]?.text).toBeFalsy();
        const { data, meta } = result.structuredContent!;
        expect(meta).toMatchObject({ body_offset, body_length: codePoints(data.body), body_total_length: total });
        expect(stored.includes(data.body)).toBe(true);
        // The outline comes with the first window only (docs/assistants.md).
        if (body_offset === 0) expect((meta.outline as unknown[]).length).toBeGreaterThan(10);
        else expect(meta.outline).toBeUndefined();
        bestCpu = Math.min(bestCpu, longestCpu);
      }
      expect(bestCpu).toBeLessThan(WINDOW_BOUND_MS);
    }
  });

  it('refuses an offset past the end with validation_failed naming the body’s length', async () => {
    const total = codePoints((await articleRow(h, a.articleId)).body);
    const result = (await client.callTool({ name: 'get_article', arguments: { article_id: a.articleId, body_offset: total + 1 } })) as ToolResult;
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content[0]!.text)).toMatchObject({
      error: 'validation_failed',
      fields: { body_offset: [`Past the end of the body, which has ${total} characters.`] },
    });
  });
});
