import { describe, expect, it } from 'vitest';
import { connectionFailureOf, DatabaseUnavailable } from '../../src/db/unavailable.js';

describe('connectionFailureOf', () => {
  it.each([
    ['Connection terminated unexpectedly'],
    ['Connection terminated due to connection timeout'],
    ['Client has encountered a connection error and is not queryable'],
    ['Client was closed and is not queryable'],
    ['Postgres connection has been discarded'],
    ['timeout exceeded when trying to connect'],
  ])('answers pg\'s "%s" as the database being unavailable (503)', (message) => {
    const failure = connectionFailureOf(new Error(message));
    expect(failure).toBeInstanceOf(DatabaseUnavailable);
    expect((failure as DatabaseUnavailable).toAppError()).toMatchObject({ code: 'service_unavailable', status: 503 });
  });

  it('answers the SQLSTATEs and socket errors of an ended connection the same way', () => {
    for (const code of ['57P01', '08006', '53300', 'ECONNRESET']) expect(connectionFailureOf(Object.assign(new Error('x'), { code }))).toBeInstanceOf(DatabaseUnavailable);
  });

  it('leaves a statement’s own failure as it is', () => {
    const unique = Object.assign(new Error('duplicate key value'), { code: '23505' });
    expect(connectionFailureOf(unique)).toBe(unique);
    const plain = new Error('Release called on client which has already been released to the pool.');
    expect(connectionFailureOf(plain)).toBe(plain);
  });
});
