import { once } from 'node:events';
import { getPriority } from 'node:os';
import { text } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BodyChange, changeSize, nextBody } from '../../src/core/article-body.js';
import { bodyWindow, type WindowRequest } from '../../src/core/body-window.js';
import { applyReplacements } from '../../src/core/body-replacements.js';
import { MAX_BODY_LENGTH, sanitizeTrusted } from '../../src/core/html.js';
import type { Replacement } from '../../src/core/replacement.js';
import { utf8InParts } from '../../src/core/text-parts.js';
import { threadExecArgv } from '../../src/platform/threads.js';
import { HtmlPool, type LargeTurn, threadResourceLimits } from '../../src/services/html-pool.js';
import runTask, { type PoolWorkerData } from '../../src/services/html-worker.js';
import { xssVectors } from '../fixtures/xss-vectors.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { nicedThreads } from '../helpers/threads.js';
import { BACKLINK, INTERNAL, PLAIN_BODY, PROTECTED_BODY, put, revisionsOf, seedArticle } from '../helpers/write-fixtures.js';

/** What the pool answers: the inline outcome, and whether the next body is the current one. */
const pooledOutcome = (current: string, change: BodyChange) => {
  const outcome = nextBody(current, change);
  return outcome.ok ? { ...outcome, unchanged: outcome.next.body === current } : outcome;
};

/** Every task goes to one worker thread. */
const pooled = () => new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 100, timeoutMs: 60_000 });

const stored = [PROTECTED_BODY, PLAIN_BODY, `<p>${BACKLINK}</p><p>${BACKLINK}</p>`, ...xssVectors.map((vector) => sanitizeTrusted(vector))];
const submitted = [...stored, ...xssVectors, `<p>${INTERNAL}<p>unclosed <b>bold`, '<ul><li>a<div><li>b</div></ul>'];

describe('HtmlPool', () => {
  const pool = pooled();
  afterAll(() => pool.close());

  it('gives byte-identical outcomes to the inline computation, for PUT and PATCH changes', async () => {
    const change: fc.Arbitrary<BodyChange> = fc.oneof(
      fc.constantFrom(...submitted).map((body) => ({ body })),
      fc
        .array(fc.record({ find: fc.constantFrom('<p>', 'partner', 'a', '</a>', 'words', 'x'), replace: fc.constantFrom('', '<b>', 'B', '<script>') }), { maxLength: 4 })
        .map((replacements) => ({ replacements })),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...stored), change, async (current, c) => {
        expect(await pool.nextBody(1, current, c)).toEqual(pooledOutcome(current, c));
      }),
      { numRuns: 60 },
    );
  });

  it('sends no body back when the next body is the one sent (clean), and the pool answers with the one it has', async () => {
    const task = (current: string, change: BodyChange) => runTask({ current, change, state: { clean: false }, started: new SharedArrayBuffer(4) });
    const clean = task(PROTECTED_BODY, { body: PLAIN_BODY + PROTECTED_BODY });
    expect(clean).toMatchObject({ ok: true, asSent: true });
    expect(clean.ok && 'body' in clean.next).toBe(false);
    expect(task(PROTECTED_BODY, { body: `${PROTECTED_BODY}<p onclick="x()">a</p>` })).toMatchObject({ ok: true, next: { body: `${PROTECTED_BODY}<p>a</p>` } });
    expect(task(PROTECTED_BODY, { replacements: [] })).toMatchObject({ ok: true, unchanged: true, next: { body: PROTECTED_BODY } });
    const sent = PLAIN_BODY + PROTECTED_BODY;
    expect(await pool.nextBody(1, PROTECTED_BODY, { body: sent })).toEqual(pooledOutcome(PROTECTED_BODY, { body: sent }));
  });

  it.skipIf(process.platform !== 'linux')('runs its threads below the event loop’s priority, so a busy pool cannot starve the loop', async () => {
    // A pool of its own: the suite's pool has started its threads already.
    const fresh = pooled();
    const before = nicedThreads();
    try {
      await fresh.nextBody(1, PROTECTED_BODY, { body: PLAIN_BODY });
      expect(nicedThreads()).toBeGreaterThan(before);
      expect(getPriority()).toBe(0);
    } finally {
      await fresh.close();
    }
  });

  it('compares revisions inline when small and quick, in a thread otherwise, and gives up past its time limit', async () => {
    const paragraphs = (count: number, word: string) => Array.from({ length: count }, (_, i) => `<p>${word} ${i}</p>`).join('');
    const inlineFirst = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 32_768, perAccount: 100, timeoutMs: 60_000 });
    const quick = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 100, timeoutMs: 20 });
    try {
      expect(await inlineFirst.lineDiff(1, PLAIN_BODY, PLAIN_BODY.replace('Alpha', 'Omega'))).toMatchObject({ added: 1, removed: 1 });
      expect(inlineFirst.running).toBe(0);
      // Small, but past the inline time: a thread finishes it.
      expect(await inlineFirst.lineDiff(1, paragraphs(1_500, 'old'), paragraphs(1_500, 'new'))).toMatchObject({ added: 1_500, removed: 1_500 });
      // A million characters and more: in its turn, as UTF-8.
      const large = `${paragraphs(1, 'é😀')}${'<p>x</p>'.repeat(130_000)}`;
      expect(await inlineFirst.lineDiff(1, large, large.replace('é😀', 'e'))).toMatchObject({ added: 1, removed: 1, notShown: 0 });
      expect(await quick.lineDiff(1, paragraphs(4_000, 'old'), paragraphs(4_000, 'new'))).toBeUndefined();
    } finally {
      await Promise.all([inlineFirst.close(), quick.close()]);
    }
  });

  it('parses large JSON bodies as Fastify does: poisoned and invalid ones come back not ok, and so do ones past 10,000 values', async () => {
    const bytes = (text: string) => [new Uint8Array(Buffer.from(text))];
    expect(await pool.parseBody(bytes('{"body":"<p>ü 😀</p>","n":[1,2]}'), 'json')).toEqual({ ok: true, value: { body: '<p>ü 😀</p>', n: [1, 2] } });
    for (const poisoned of ['{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', '{"body":', '']) {
      expect(await pool.parseBody(bytes(poisoned), 'json')).toEqual({ ok: false });
    }
    const values = (count: number) => bytes(`[${new Array(count - 1).fill('{}').join(',')}]`);
    expect(await pool.parseBody(values(10_000), 'json')).toMatchObject({ ok: true });
    expect(await pool.parseBody(values(10_001), 'json')).toEqual({ ok: false, tooManyValues: true });
    const fields = (count: number) => bytes(Array.from({ length: count }, (_, i) => `f=${i}`).join('&'));
    // The object, the array of one field's repeats, and each repeat: 9,999 repeats make 10,001 values.
    expect(await pool.parseBody(fields(9_998), 'form')).toMatchObject({ ok: true });
    expect(await pool.parseBody(fields(9_999), 'form')).toEqual({ ok: false, tooManyValues: true });
  });

  it('parses a body in the chunks it arrived in, cut inside characters, each chunk transferred', async () => {
    const text = JSON.stringify({ body: '<p>ü 😀 ✓</p>'.repeat(1_000) });
    const whole = Buffer.from(text);
    // Cut every 7 bytes: inside two-, three- and four-byte characters alike.
    const parts = Array.from({ length: Math.ceil(whole.length / 7) }, (_, i) => new Uint8Array(whole.subarray(i * 7, i * 7 + 7)));
    const owned = parts.map((part) => new Uint8Array(part));
    expect(await pool.parseBody(owned, 'json')).toEqual({ ok: true, value: JSON.parse(text) });
    expect(owned.every((part) => part.buffer.byteLength === 0)).toBe(true);
    // Views into a larger buffer are copied: the buffer stays whole here.
    expect(await pool.parseBody(parts.slice(0, 3), 'json')).toEqual({ ok: false });
    expect(whole.toString()).toBe(text);
  });

  it('gives back the large strings of a parsed body exactly (sent back as UTF-8), lone surrogates included', async () => {
    const value = { body: '<p>ü 😀 “q”</p>'.repeat(20_000), reason: 'r', also: [`${'x'.repeat(70_000)}\ud800`] };
    const parts = [new Uint8Array(Buffer.from(JSON.stringify(value)))];
    expect(await pool.parseBody(parts, 'json')).toEqual({ ok: true, value });
  });

  it('refuses a JSON body beyond the queue bound with rate_limited', async () => {
    const bounded = new HtmlPool({ threads: 1, maxQueuedChars: 1, inlineBelow: 0, perAccount: 100, timeoutMs: 60_000 });
    try {
      const parts = () => [new Uint8Array(Buffer.from(JSON.stringify({ body: 'x'.repeat(100_000) })))];
      const results = await Promise.allSettled([bounded.parseBody(parts(), 'json'), bounded.parseBody(parts(), 'json')]);
      expect(results[0]).toMatchObject({ status: 'fulfilled', value: { ok: true } });
      expect((results[1] as PromiseRejectedResult).reason.toBody()).toMatchObject({ error: 'rate_limited' });
    } finally {
      await bounded.close();
    }
  });

  it('refuses a third concurrent task of one account while another account still gets its own', async () => {
    const bounded = new HtmlPool({ threads: 2, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 2, timeoutMs: 60_000 });
    try {
      const change = { body: PROTECTED_BODY };
      const results = await Promise.allSettled([
        bounded.nextBody(1, PROTECTED_BODY, change),
        bounded.nextBody(1, PROTECTED_BODY, change),
        bounded.nextBody(1, PROTECTED_BODY, change),
        bounded.nextBody(2, PROTECTED_BODY, change),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      const refused = (results[2] as PromiseRejectedResult).reason;
      expect(refused.toBody()).toMatchObject({ error: 'rate_limited', limit: 2 });
      expect(refused.retryAfter).toBe(1);
    } finally {
      await bounded.close();
    }
  });

  it('runs bodies of a million characters one at a time, on one of at least two threads: a small pooled edit sent after two of them finishes first', async () => {
    const lanes = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 100, timeoutMs: 60_000 });
    try {
      const big = largeBody(40_000);
      expect(big.length).toBeGreaterThan(3_000_000);
      // Both threads are started first: a cold thread's start-up is not what is compared.
      await Promise.all([lanes.nextBody(3, PLAIN_BODY, { body: PROTECTED_BODY }), lanes.nextBody(3, PLAIN_BODY, { body: PROTECTED_BODY })]);
      const finished: string[] = [];
      const track = (name: string, outcome: Promise<unknown>) => outcome.then(() => finished.push(name));
      const large = [track('large 1', lanes.nextBody(1, PLAIN_BODY, { body: big })), track('large 2', lanes.nextBody(2, PLAIN_BODY, { body: `${big}<p>2</p>` }))];
      // Sent once the large ones are on their way to the threads (encoded: a few milliseconds).
      await sleep(50);
      await Promise.all([...large, track('small', lanes.nextBody(3, PLAIN_BODY, { body: PROTECTED_BODY }))]);
      // Had the two large ones taken both threads, the small edit would have waited behind them.
      expect(finished).toEqual(['small', 'large 1', 'large 2']);
    } finally {
      await lanes.close();
    }
  });

  it('parses a request body of a million bytes or more in turn with large edits; a smaller one does not wait', async () => {
    const lanes = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 100, timeoutMs: 60_000 });
    try {
      const big = largeBody(40_000);
      await Promise.all([lanes.nextBody(3, PLAIN_BODY, { body: PROTECTED_BODY }), lanes.nextBody(3, PLAIN_BODY, { body: PROTECTED_BODY })]);
      const json = (chars: number) => [new Uint8Array(Buffer.from(JSON.stringify({ body: 'x'.repeat(chars) })))];
      const finished: string[] = [];
      const track = (name: string, outcome: Promise<unknown>) => outcome.then(() => finished.push(name));
      const edit = track('large edit', lanes.nextBody(1, PLAIN_BODY, { body: big }));
      await sleep(50);
      await Promise.all([edit, track('large parse', lanes.parseBody(json(1_200_000), 'json')), track('small parse', lanes.parseBody(json(300_000), 'json'))]);
      // Parsed on the free thread at once, the large body would have been back before the edit.
      expect(finished).toEqual(['small parse', 'large edit', 'large parse']);
    } finally {
      await lanes.close();
    }
  });

  it('runs the large edits of work that holds the large turn in that turn; other large tasks, and a turn no longer held, wait for it', async () => {
    const lanes = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 100, timeoutMs: 60_000 });
    try {
      const big = largeBody(40_000);
      const order: string[] = [];
      let ended: LargeTurn | undefined;
      const holder = lanes.inLargeTurn(async (turn) => {
        // Given the turn it holds, the edit runs at once (waiting for the next turn, it never would).
        const outcome = await lanes.nextBody(1, PLAIN_BODY, { body: big }, { clean: false }, turn);
        expect(outcome.ok).toBe(true);
        order.push('holder edit');
        await sleep(100);
        order.push('holder done');
        ended = turn;
      });
      await sleep(10);
      const other = lanes.nextBody(2, PLAIN_BODY, { body: `${big}<p>2</p>` }).then(() => order.push('other edit'));
      await Promise.all([holder, other]);
      expect(order).toEqual(['holder edit', 'holder done', 'other edit']);

      let release!: () => void;
      const next = lanes.inLargeTurn(() => new Promise<void>((resolve) => (release = resolve)));
      const late = lanes.inLargeTurn(async () => order.push('ended turn'), ended);
      await sleep(50);
      expect(order).not.toContain('ended turn');
      release();
      await Promise.all([next, late]);
      expect(order.at(-1)).toBe('ended turn');
    } finally {
      await lanes.close();
    }
  });

  it('hands large texts to a thread whole, as UTF-8 in parts: every character width, surrogate pairs across the parts', async () => {
    const lanes = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 100, timeoutMs: 60_000 });
    try {
      // Parts are 256 Ki characters: with pairs back to back, one of the two shifts puts a pair
      // across every boundary.
      for (const shift of ['', 'x']) {
        const current = `${PROTECTED_BODY}<p>${shift}${'😀'.repeat(550_000)} ü — 中</p>`;
        const changes: BodyChange[] = [{ body: `${current}<p>ß ${shift}😀</p>` }, { replacements: [{ find: 'ü', replace: 'ö 😀' }] }];
        for (const change of changes) {
          expect(changeSize(current, change)).toBeGreaterThan(1_000_000);
          expect(await lanes.nextBody(1, current, change)).toEqual(pooledOutcome(current, change));
        }
      }
    } finally {
      await lanes.close();
    }
  });

  it('takes a large current body as its UTF-8 bytes (as the off-loop connection reads it) and answers as for its string', async () => {
    const lanes = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 100, timeoutMs: 60_000 });
    try {
      const current = sanitizeTrusted(`${PROTECTED_BODY}<p>${'😀'.repeat(300_000)} ü — 中 ${'a'.repeat(400_000)}</p>`);
      const changes: BodyChange[] = [
        { body: current },
        { body: `${current}<p>ß 😀</p>` },
        { body: PLAIN_BODY },
        { replacements: [] },
        { replacements: [{ find: 'ü', replace: 'ö 😀' }] },
        { replacements: [{ find: 'ü', replace: 'ü' }] },
        { replacements: [{ find: 'not there', replace: 'x' }] },
      ];
      for (const change of changes) {
        const bytes = new Uint8Array(Buffer.from(current, 'utf8'));
        expect(await lanes.nextBody(1, bytes, change)).toEqual(pooledOutcome(current, change));
        // Handed over: the thread has them now.
        expect(bytes.byteLength).toBe(0);
      }
      // A view into a larger buffer is copied: the buffer it is part of stays here.
      const shared = Buffer.from(`x${current}`, 'utf8');
      expect(await lanes.nextBody(1, shared.subarray(1), { replacements: [] })).toMatchObject({ ok: true, unchanged: true, next: { body: current } });
      expect(shared.byteLength).toBeGreaterThan(0);
    } finally {
      await lanes.close();
    }
  });

  it('answers a large body holding a lone surrogate with what its thread computed (U+FFFD), not the string it was sent', async () => {
    const lanes = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 100, timeoutMs: 60_000 });
    try {
      const body = `${PROTECTED_BODY}<p>${'a'.repeat(1_000_000)} \ud800 lone</p>`;
      const outcome = await lanes.nextBody(1, PROTECTED_BODY, { body });
      expect(outcome).toMatchObject({ ok: true });
      const next = outcome.ok ? outcome.next.body : '';
      expect(next).toBe(body.replace('\ud800', '\uFFFD'));
    } finally {
      await lanes.close();
    }
  });

  it('counts a transferred JSON body out of the queue once parsed: a second one after it is not refused', async () => {
    const bounded = new HtmlPool({ threads: 1, maxQueuedChars: 1, inlineBelow: 0, perAccount: 100, timeoutMs: 60_000 });
    try {
      for (const n of [1, 2]) {
        // A buffer of its own, as a request body is: it is transferred to the thread.
        const bytes = new Uint8Array(Buffer.from(JSON.stringify({ body: `${n}`.repeat(100_000) })));
        expect(await bounded.parseBody([bytes], 'json')).toMatchObject({ ok: true, value: { body: `${n}`.repeat(100_000) } });
      }
      // A view into a larger buffer is copied, not transferred: the buffer stays whole here.
      const shared = Buffer.from(`[padding]${JSON.stringify({ body: 'view' })}`);
      const view = shared.subarray('[padding]'.length);
      expect(await bounded.parseBody([view], 'json')).toEqual({ ok: true, value: { body: 'view' } });
      expect(shared.toString()).toBe('[padding]{"body":"view"}');
    } finally {
      await bounded.close();
    }
  });

  it('stops a task that runs past its time limit with validation_failed on body', async () => {
    const strict = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 10, timeoutMs: 1 });
    try {
      const huge = `<p ${Array.from({ length: 200_000 }, (_, i) => `a${i}="x"`).join(' ')}>x</p>`;
      const error = await strict.nextBody(1, PLAIN_BODY, { body: huge }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((error as { toBody(): unknown }).toBody()).toMatchObject({ error: 'validation_failed', fields: { body: [expect.stringMatching(/too complex/)] } });
    } finally {
      await strict.close();
    }
  });

  // A thread that fills its heap collects again and again before it stops: seconds of CPU.
  it('stops a task past its heap bound with validation_failed on body, refuses a body that fills it as too many values, and goes on working', { timeout: 120_000 }, async () => {
    const small = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 0, perAccount: 10, timeoutMs: 60_000, heapMb: 64 });
    try {
      // 600,000 attributes on one element: a thread's heap reached 278 MB without the bound.
      const huge = `<p ${Array.from({ length: 600_000 }, (_, i) => `a${i}=1`).join(' ')}>x</p>`;
      const error = await small.nextBody(1, PLAIN_BODY, { body: huge }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((error as { toBody(): unknown }).toBody()).toMatchObject({
        error: 'validation_failed',
        fields: { body: ['The HTML is too complex to process within 64 MB of memory; simplify its markup. Nothing was saved.'] },
      });
      expect(small.running).toBe(0);
      const objects = new Uint8Array(Buffer.from(`[${'{},'.repeat(1_700_000)}{}]`));
      expect(await small.parseBody([objects], 'json')).toEqual({ ok: false, tooManyValues: true });
      expect(await small.nextBody(1, PLAIN_BODY, { body: PROTECTED_BODY })).toMatchObject({ ok: true });
    } finally {
      await small.close();
    }
  });

  it('collects a thread’s garbage after a large body once it has answered: its heap ends near what the task keeps, not what it grew', async () => {
    // A thread of its own, as the pool starts one (from the TypeScript sources, through the pool's
    // module hooks), running one task of 5 MB (current body and new body) and reading its heap.
    const source = `
      import { parentPort, workerData } from 'node:worker_threads';
      import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
      const { default: run } = await import(workerData.module);
      // Each body as shared bytes, as a large PUT's comes: the thread then collects after the task
      // whatever its heap holds (below its bound, it would collect only when its garbage did not
      // come in a collection during the task).
      const shared = (body) => {
        const bytes = new TextEncoder().encode(body);
        const copy = new Uint8Array(new SharedArrayBuffer(bytes.length));
        copy.set(bytes);
        return { utf8: [copy] };
      };
      const [current, body] = workerData.bodies;
      // The texts are in no variable here: in the pool, the task's message is gone once answered.
      const ok = run({ current: shared(current), change: { body: shared(body) }, state: { clean: true }, started: new SharedArrayBuffer(4) }).ok;
      // The thread's next turn, where the pool's thread is once it has posted the answer.
      await new Promise((resolve) => setImmediate(resolve));
      const largeObjects = getHeapSpaceStatistics().find((space) => space.space_name === 'large_object_space').space_used_size;
      parentPort.postMessage({ ok, heapMb: getHeapStatistics().used_heap_size / 2 ** 20, largeObjectsMb: largeObjects / 2 ** 20 });`;
    const bodies = [largeBody(30_000), largeBody(30_001)];
    const thread = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`), {
      resourceLimits: threadResourceLimits(256),
      execArgv: threadExecArgv,
      workerData: {
        module: new URL('../../src/services/html-worker.ts', import.meta.url).href,
        bodies,
        nice: 0,
      } satisfies PoolWorkerData & Record<string, unknown>,
    });
    const [answer] = (await once(thread, 'message')) as [{ ok: boolean; heapMb: number; largeObjectsMb: number }];
    await thread.terminate();
    expect(answer.ok).toBe(true);
    // The heap in use, not the memory V8 still holds for it (which its background threads give
    // back later, on a busy machine after the measurement): collected on the thread's next turn, it
    // is about 15–16 MB on Node 22 and 24, where a thread given a tiny body uses 10–11 MB.
    expect(answer.heapMb).toBeLessThan(20);
    // Its large objects are the thread's own copies of the two bodies (its `workerData`), not
    // also the subject of its last regular-expression match (2.4 MB more), which V8 keeps until
    // the thread's next match.
    const bodiesMb = bodies.reduce((sum, body) => sum + body.length, 0) / 2 ** 20;
    expect(answer.largeObjectsMb).toBeLessThan(bodiesMb + 1);
    // The thread took `gc` for itself only: a thread started after it finds none.
    const later = new Worker("require('node:worker_threads').parentPort.postMessage(typeof gc)", { eval: true });
    expect(await once(later, 'message')).toEqual(['undefined']);
    await later.terminate();
  });

  it('lets go of a large edit’s texts once its thread has answered: the thread, idle, holds no copy of them', async () => {
    const own = pooled();
    try {
      // What the idle thread holds over a megabyte after a small edit (the runtime's own: the test
      // runner's module sources, buffers) is the baseline; a large edit must add nothing to it.
      // A heap snapshot collects first: what it still finds is held. Piscina's default
      // (`atomics: 'sync'`) has the thread wait for its next task inside the call that posted the
      // answer, where nothing scheduled on it runs: the snapshot then found one of the task's bodies.
      const largeNodesAfter = async (paragraphs: number) => {
        expect(await own.nextBody(1, largeBody(paragraphs), { body: largeBody(paragraphs + 1) })).toMatchObject({ ok: true });
        // The thread's next turn, where it collects and lets go of its last match.
        await sleep(100);
        const [thread] = (own as unknown as { pool: { threads: Worker[] } }).pool.threads;
        return largeNodesMb(JSON.parse(await text(await thread!.getHeapSnapshot())) as HeapSnapshot);
      };
      const baseline = await largeNodesAfter(3);
      const afterLarge = await largeNodesAfter(30_000);
      expect(afterLarge.filter((node) => !baseline.includes(node))).toEqual([]);
    } finally {
      await own.close();
    }
  }, 120_000);
});

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** The sizes (MB) of a heap snapshot's objects over a megabyte, with their type and name. */
const largeNodesMb = ({ snapshot: { meta }, nodes, strings }: HeapSnapshot): string[] => {
  const width = meta.node_fields.length;
  const [type, name, size] = ['type', 'name', 'self_size'].map((field) => meta.node_fields.indexOf(field));
  const large: string[] = [];
  for (let i = 0; i < nodes.length; i += width) {
    if (nodes[i + size] < 2 ** 20) continue;
    large.push(`${meta.node_types[0][nodes[i + type]]} ${strings[nodes[i + name]].slice(0, 40)}: ${(nodes[i + size] / 2 ** 20).toFixed(1)} MB`);
  }
  return large;
};

/** A large body of ordinary article HTML. */
const largeBody = (paragraphs: number) =>
  Array.from({ length: paragraphs }, (_, i) => `<p>Paragraph ${i} with <a href="https://x.example/${i}">a link</a> and words.</p>`).join('') + PROTECTED_BODY;

/** The body after each item of `replacements` in turn, as `applyReplacements` makes them (a failing item leaves it). */
function bodiesAlong(current: string, replacements: readonly Replacement[]): string[] {
  const bodies = [current];
  for (const item of replacements) {
    const applied = applyReplacements(bodies.at(-1)!, [item]);
    bodies.push(applied.ok ? applied.body : bodies.at(-1)!);
  }
  return bodies;
}

describe('changeSize: an edit is sized by the bodies it produces', () => {
  const replacementsOf = fc.array(
    fc.record({ find: fc.constantFrom('e', 'ee', '<p>', 'x', 'none'), replace: fc.constantFrom('', 'E', 'x'.repeat(50), '<b>e</b>'), all: fc.boolean() }),
    { maxLength: 4 },
  );
  const bodies = fc.constantFrom(PLAIN_BODY, PROTECTED_BODY, '<p>eee ee e</p>'.repeat(20));

  it('is the current body and the longest body the replacements make, while they stay under exactBelow', () => {
    fc.assert(
      fc.property(bodies, replacementsOf, (current, replacements) => {
        const longest = Math.max(...bodiesAlong(current, replacements).map((body) => body.length));
        expect(changeSize(current, { replacements }, Infinity)).toBe(replacements.length === 0 ? current.length : current.length + longest);
      }),
      { numRuns: 300 },
    );
  });

  it('is never less than that past exactBelow, or for a body known by its length, and at most what a body may hold', () => {
    fc.assert(
      fc.property(bodies, replacementsOf, fc.integer({ min: 0, max: 2_000 }), (current, replacements, exactBelow) => {
        const longest = Math.max(...bodiesAlong(current, replacements).map((body) => body.length));
        for (const size of [changeSize(current, { replacements }, exactBelow), changeSize(current.length, { replacements })]) {
          expect(size).toBeGreaterThanOrEqual(current.length + (replacements.length === 0 ? 0 : Math.min(longest, MAX_BODY_LENGTH)));
          expect(size).toBeLessThanOrEqual(current.length + MAX_BODY_LENGTH);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('counts a replacement that multiplies a small body by what it makes, not by what it sends', () => {
    const current = '<p>Seventeen green trees screen the deep creek.</p>'.repeat(10);
    const matches = current.split('e').length - 1;
    const change = { replacements: [{ find: 'e', replace: 'x'.repeat(3_000), all: true }] };
    expect(changeSize(current, change, 32_768)).toBe(current.length + current.length + matches * 2_999);
    // A new body counts as it is.
    expect(changeSize(current, { body: 'x'.repeat(100) })).toBe(current.length + 100);
  });
});

describe('HtmlPool sizes an edit by what it produces', () => {
  it('runs a small PATCH that multiplies the body in a thread (under the account’s bound), with the outcome it has inline', async () => {
    const pool = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 32_768, perAccount: 1, timeoutMs: 60_000 });
    try {
      const current = '<p>Seventeen green trees screen the deep creek.</p>'.repeat(10);
      // 150 matches: 45 KB more.
      const change: BodyChange = { replacements: [{ find: 'e', replace: 'x'.repeat(300), all: true }] };
      const [first, second] = await Promise.allSettled([pool.nextBody(1, current, change), pool.nextBody(1, current, change)]);
      expect(first).toEqual({ status: 'fulfilled', value: pooledOutcome(current, change) });
      // Only pooled work counts against the account's bound.
      expect(second).toMatchObject({ status: 'rejected', reason: { code: 'rate_limited' } });
      // The same replacement by a short text runs inline, uncounted.
      const small: BodyChange = { replacements: [{ find: 'e', replace: 'E', all: true }] };
      expect(await Promise.all([pool.nextBody(1, current, small), pool.nextBody(1, current, small)])).toEqual([pooledOutcome(current, small), pooledOutcome(current, small)]);
    } finally {
      await pool.close();
    }
  });

  it('cuts a window of a large body in a thread, from a string, its UTF-8 bytes or UTF-8 parts, as inline', async () => {
    const pool = new HtmlPool({ threads: 1, maxQueuedChars: 1e9, inlineBelow: 32_768, perAccount: 1, timeoutMs: 60_000 });
    try {
      const body = Array.from({ length: 3_000 }, (_, i) => `<h2>Part ${i} 😀</h2><p>Zähne — ${'ü'.repeat(i % 50)}</p>`).join('');
      const requests: WindowRequest[] = [
        { offset: 0, length: undefined, budget: 20_000, outlineBudget: 8_000 },
        { offset: 50_000, length: 1_000, budget: 20_000, outlineBudget: 8_000 },
        { offset: 10 ** 7, length: undefined, budget: 20_000, outlineBudget: 8_000 },
      ];
      for (const request of requests) {
        const inline = bodyWindow(body, request);
        expect(await pool.bodyWindow(1, body, request)).toEqual(inline);
        expect(await pool.bodyWindow(1, new Uint8Array(Buffer.from(body)), request)).toEqual(inline);
        expect(await pool.bodyWindow(1, await utf8InParts(body), request)).toEqual(inline);
      }
      expect(await pool.bodyWindow(1, '<p>small</p>', requests[0]!)).toEqual(bodyWindow('<p>small</p>', requests[0]!));
      const both = await Promise.allSettled([pool.bodyWindow(1, body, requests[0]!), pool.bodyWindow(1, body, requests[0]!)]);
      expect(both[1]).toMatchObject({ status: 'rejected', reason: { code: 'rate_limited' } });
    } finally {
      await pool.close();
    }
  });
});

describe('large edits over the API', () => {
  let h: Harness;
  afterEach(async () => h?.close());

  it('refuses a flood beyond the queue bound with 429 rate_limited and saves nothing for it', async () => {
    h = await startHarness({ env: { HTML_WORKERS: '1', HTML_QUEUE_BYTES: '1', HTML_INLINE_BELOW: '0', HEAVY_EDITS_PER_ACCOUNT: '50' } });
    const articles = [];
    for (let i = 0; i < 8; i++) articles.push(await seedArticle(h.services));
    const responses = await Promise.all(
      articles.map((a, i) => put(h, a.articleId, a.customer.key, { body: `${PROTECTED_BODY}<p>flood ${i}</p>` })),
    );
    const refused = responses.filter((r) => r.status === 429);
    expect(responses.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(refused.length).toBeGreaterThanOrEqual(8 - 2);
    for (const r of refused) {
      expect(r.body).toMatchObject({ error: 'rate_limited', message: expect.stringMatching(/busy with large edits/) });
      expect(r.headers['retry-after']).toBe('1');
    }
    for (const [i, a] of articles.entries()) {
      const revisions = await revisionsOf(h, a.articleId);
      expect(revisions.length).toBe(responses[i]!.status === 200 ? 2 : 1);
    }
  });

  it('refuses an account a third heavy request in flight (dry runs count) while another account is served', async () => {
    h = await startHarness({ env: { HTML_WORKERS: '2', HTML_INLINE_BELOW: '0', HEAVY_EDITS_PER_ACCOUNT: '2' } });
    const a = await seedArticle(h.services);
    const b = await seedArticle(h.services);
    const body = { body: `${PROTECTED_BODY}<p>changed</p>` };
    const [first, second, third, other] = await Promise.all([
      put(h, a.articleId, a.customer.key, body, { query: '?dry_run=true' }),
      put(h, a.articleId, a.customer.key, body, { query: '?dry_run=true' }),
      put(h, a.articleId, a.customer.key, body),
      put(h, b.articleId, b.customer.key, body),
    ]);
    // Which of the account's three reaches the pool last depends on the database's timing.
    const own = [first!, second!, third!];
    expect(own.map((r) => r.status).sort()).toEqual([200, 200, 429]);
    expect(own.find((r) => r.status === 429)!.body).toMatchObject({
      error: 'rate_limited',
      limit: 2,
      message: expect.stringMatching(/2 large edits in progress/),
    });
    expect(other!.status).toBe(200);
    expect((await revisionsOf(h, a.articleId)).length).toBe(third!.status === 200 ? 2 : 1);
    expect((await revisionsOf(h, b.articleId)).length).toBe(2);
  });
});

describe('pathological markup does not hold the event loop', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());
  const cases: [string, string][] = [
    ['300,000 attributes', `<p ${Array.from({ length: 300_000 }, (_, i) => `a${i}=""`).join(' ')}>x</p>`],
    ['100,000 elements', '<span>w</span>'.repeat(100_000)],
    // Refused at depth 256, after the parse has gone through the rest of the body.
    ['deep nesting', largeBody(20_000) + '<b>'.repeat(200_000)],
    ['a large ordinary body', largeBody(20_000)],
  ];
  for (const [name, body] of cases) {
    for (const query of ['', '?dry_run=true']) {
      it(`${name}${query ? ', dry run' : ''}: GET /healthz sent meanwhile answers first`, async () => {
        const a = await seedArticle(h.services, { body: largeBody(10) });
        const order: string[] = [];
        const heavy = put(h, a.articleId, a.customer.key, { body }, { query }).then((r) => {
          order.push('heavy');
          return r;
        });
        // Wait until the heavy request's HTML work is under way, then ask for health.
        while (h.services.htmlPool.running === 0 && order.length === 0) await new Promise((resolve) => setImmediate(resolve));
        const health = await h.app.inject({ method: 'GET', url: '/healthz' });
        order.push('health');
        const response = await heavy;
        expect(health.statusCode).toBe(200);
        expect(order).toEqual(['health', 'heavy']);
        expect([200, 422]).toContain(response.status);
      });
    }
  }
});
