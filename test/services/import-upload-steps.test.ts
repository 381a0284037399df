import { afterEach, describe, expect, it, vi } from 'vitest';
import { toTimestamp } from '../../src/core/time.js';
import { ImportService } from '../../src/services/import.js';
import { ImportUploadSteps } from '../../src/services/import-upload-steps.js';
import { stepHeartbeatMs } from '../../src/services/import-uploads.js';
import { createCustomer, useHarness } from '../helpers/harness.js';

describe('a step of a UI import stamps its upload while it runs (ImportUploadSteps.stamped)', () => {
  const h = useHarness();

  afterEach(() => {
    vi.useRealTimers();
  });

  it('stamps the upload every heartbeat while the step runs, and no more once it is over', async () => {
    const db = h.services.db.kysely;
    const staff = await createCustomer(h.services, { staff: true });
    const start = toTimestamp(h.clock.now());
    const { id } = await db
      .insertInto('import_uploads')
      .values({ token_hash: 'stamped', user_id: staff.userId, session_hash: 's', size: 2, plan: '{}', state: 'applying', created_at: start, updated_at: start })
      .returning('id')
      .executeTakeFirstOrThrow();
    const errors: unknown[] = [];
    const steps = new ImportUploadSteps(db, h.clock, new ImportService(db, h.clock, h.services.db.dialect), (error) => errors.push(error));
    const stampOf = async () => (await db.selectFrom('import_uploads').select('updated_at').where('id', '=', id).executeTakeFirstOrThrow()).updated_at;
    /** The stamp once it is `expected` (the heartbeat's write is not awaited), or what it is after a while. */
    const stampBecomes = async (expected: string) => {
      for (let i = 0; i < 100 && (await stampOf()) !== expected; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      return stampOf();
    };

    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let finish!: (value: string) => void;
    const step = steps.stamped(id, () => new Promise<string>((resolve) => (finish = resolve)));
    h.clock.set(toTimestamp(new Date(h.clock.now().getTime() + stepHeartbeatMs)));
    vi.advanceTimersByTime(stepHeartbeatMs - 1);
    expect(await stampOf()).toBe(start);
    vi.advanceTimersByTime(1);
    const beat = toTimestamp(h.clock.now());
    expect(await stampBecomes(beat)).toBe(beat);

    finish('done');
    expect(await step).toBe('done');
    h.clock.set(toTimestamp(new Date(h.clock.now().getTime() + stepHeartbeatMs * 3)));
    vi.advanceTimersByTime(stepHeartbeatMs * 3);
    expect(await stampBecomes(toTimestamp(h.clock.now()))).toBe(beat);
    expect(errors).toEqual([]);
  });
});
