import { describe, expect, it } from 'vitest';
import { LoopTurns } from '../../src/platform/loop-turns.js';

// Work asks for a turn of the event loop (src/platform/loop-turns.ts): at once while the turn has
// budget left and nobody waits; otherwise in its lane's queue, lanes taking turns, with the loop's
// timers and sockets served between turns.

const block = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

/** Takes a turn of `turns` in `lane`, then holds the loop `ms` and notes `name` in `order`. */
const work = (turns: LoopTurns, ms: number, order: string[], name: string, lane?: string) =>
  Promise.resolve(turns.take(lane)).then(() => {
    order.push(name);
    block(ms);
  });

/** Turns of `budgetMs` whose current turn has spent its budget: the next work waits. */
const spent = (budgetMs: number) => {
  const turns = new LoopTurns(budgetMs);
  expect(turns.take()).toBeUndefined();
  block(budgetMs + 1);
  return turns;
};

describe('turns of the event loop', () => {
  it('let work go at once while the turn has budget and nobody waits', () => {
    const turns = new LoopTurns(20);
    expect(turns.take()).toBeUndefined();
    expect(turns.take()).toBeUndefined();
    expect(turns.waitedMs()).toBe(0);
  });

  it('queue work past the budget, first come first served, and start afresh in a later turn', async () => {
    const turns = spent(5);
    const order: string[] = [];
    const queued = ['a', 'b', 'c'].map((name) => work(turns, 1, order, name));
    await Promise.all(queued);
    expect(order).toEqual(['a', 'b', 'c']);
    expect(turns.waitedMs()).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(turns.take()).toBeUndefined();
  });

  it('serve timers between turns: no turn holds much more than the budget and one piece of work', async () => {
    const turns = spent(5);
    const order: string[] = [];
    const queued = Array.from({ length: 6 }, (_, i) => work(turns, 4, order, `work ${i}`));
    const timer = new Promise((resolve) => setTimeout(resolve, 0)).then(() => order.push('timer'));
    await Promise.all([...queued, timer]);
    // In one turn, the six pieces of 4 ms would hold the loop 24 ms and the timer would come last;
    // the budget of 5 ms lets two go per turn.
    expect(order.filter((name) => name !== 'timer')).toEqual(Array.from({ length: 6 }, (_, i) => `work ${i}`));
    expect(order.indexOf('timer')).toBeLessThanOrEqual(2);
  });

  it('tell how long the first in the queue has waited', async () => {
    const turns = spent(1);
    const waiting = turns.take();
    expect(waiting).toBeInstanceOf(Promise);
    block(10);
    expect(turns.waitedMs()).toBeGreaterThanOrEqual(10);
    await waiting;
    expect(turns.waitedMs()).toBe(0);
  });

  it('let lanes take turns: work in a lane of its own waits for one piece of each other lane, not for a flood', async () => {
    const turns = spent(1);
    const order: string[] = [];
    const flood = Array.from({ length: 5 }, (_, i) => work(turns, 0, order, `flood ${i}`, 'flood'));
    const other = Array.from({ length: 2 }, (_, i) => work(turns, 0, order, `other ${i}`, 'other'));
    block(5);
    const probe = work(turns, 0, order, 'probe', 'probe');
    expect(turns.waitedMs()).toBeGreaterThanOrEqual(5);
    await Promise.all([...flood, ...other, probe]);
    expect(order).toEqual(['flood 0', 'other 0', 'probe', 'flood 1', 'other 1', 'flood 2', 'flood 3', 'flood 4']);
    expect(turns.waitedMs()).toBe(0);
  });

  it('keep first come first served within a lane, and for work that names no lane', async () => {
    const turns = spent(1);
    const order: string[] = [];
    const queued = ['a', 'b', 'c'].map((name) => work(turns, 0, order, name));
    const edits = ['d', 'e'].map((name) => work(turns, 0, order, name, 'edits'));
    await Promise.all([...queued, ...edits]);
    expect(order).toEqual(['a', 'd', 'b', 'e', 'c']);
  });
});
