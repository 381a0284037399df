import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namedStatements, plannedForItsValues } from '../../src/db/pg-statements.js';
import { isolatedPostgresUrl, testDatabaseUrl } from '../helpers/harness.js';

describe.skipIf(!testDatabaseUrl)('PostgreSQL: queries outside a transaction run as named prepared statements (namedStatements)', () => {
  let drop: () => Promise<void>;
  let db: Kysely<Record<string, never>>;
  let other: Kysely<Record<string, never>>;

  beforeAll(async () => {
    const isolated = await isolatedPostgresUrl(testDatabaseUrl!);
    drop = isolated.drop;
    // One connection: the prepared statements looked at are those of the session that ran the queries.
    db = new Kysely({ dialect: new PostgresDialect({ pool: namedStatements(new pg.Pool({ connectionString: isolated.url, max: 1 })) }) });
    other = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: isolated.url, max: 1 }) }) });
  });

  afterAll(async () => {
    await db?.destroy();
    await other?.destroy();
    await drop?.();
  });

  /** The connection's prepared statements: the names of each text. */
  const prepared = async () => {
    const names = new Map<string, string[]>();
    for (const { name, statement } of (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements order by name`.execute(db)).rows) {
      names.set(statement, [...(names.get(statement) ?? []), name]);
    }
    return names;
  };

  it('prepares a text once under one name and answers every run of it with its own values', async () => {
    expect((await sql<{ n: number }>`select ${1}::int + ${2}::int as n`.execute(db)).rows).toEqual([{ n: 3 }]);
    expect((await sql<{ n: number }>`select ${40}::int + ${2}::int as n`.execute(db)).rows).toEqual([{ n: 42 }]);
    const names = await prepared();
    expect(names.get('select $1::int + $2::int as n')).toEqual([expect.stringMatching(/^anchorage_\d+$/)]);
    expect(new Set([...names.values()].flat()).size).toBe(names.size);
  });

  it('names nothing inside a transaction', async () => {
    await db.transaction().execute(async (trx) => {
      expect((await sql<{ n: number }>`select ${5}::int * 3 as n`.execute(trx)).rows).toEqual([{ n: 15 }]);
    });
    expect((await prepared()).has('select $1::int * 3 as n')).toBe(false);
  });

  it('leaves a text planned for its values unnamed, however often it runs', async () => {
    const marked = () => sql<{ n: number }>`${sql.raw(plannedForItsValues)}select ${6}::int * 7 as n`.execute(db);
    for (let run = 0; run < 7; run++) expect((await marked()).rows).toEqual([{ n: 42 }]);
    expect([...(await prepared()).keys()].some((text) => text.includes('* 7'))).toBe(false);
  });

  it('runs a read again when a migration changed its table since it was prepared, here and on a new name', async () => {
    await sql`create table items (id int primary key, title text)`.execute(other);
    await sql`insert into items values (1, 'one')`.execute(other);
    const read = () => sql<Record<string, unknown>>`select * from items where id = ${1}`.execute(db);
    expect((await read()).rows).toEqual([{ id: 1, title: 'one' }]);
    const [before] = (await prepared()).get('select * from items where id = $1')!;
    await sql`alter table items add column word_count int default 7`.execute(other);
    expect((await read()).rows).toEqual([{ id: 1, title: 'one', word_count: 7 }]);
    expect((await read()).rows).toEqual([{ id: 1, title: 'one', word_count: 7 }]);
    // The stale statement stays with the connection, unused; the text runs under a new name.
    const after = (await prepared()).get('select * from items where id = $1')!;
    expect(after).toHaveLength(2);
    expect(after).toContain(before);
  });

  it('refuses a bad text as PostgreSQL does, every time, and goes on', async () => {
    await expect(sql`select * from no_such_table`.execute(db)).rejects.toThrow(/no_such_table/);
    await expect(sql`select * from no_such_table`.execute(db)).rejects.toThrow(/no_such_table/);
    expect((await sql<{ n: number }>`select ${7}::int as n`.execute(db)).rows).toEqual([{ n: 7 }]);
  });

  it('leaves a text of more than 16 parameters unnamed, and names at most 256 texts', async () => {
    const many = Array.from({ length: 17 }, (_, i) => i);
    const sum = sql<{ n: number }>`select ${sql.join(many.map((i) => sql`${i}::int`), sql` + `)} as n`;
    expect((await sum.execute(db)).rows).toEqual([{ n: 136 }]);
    for (let i = 0; i < 300; i++) expect((await sql.raw<{ n: number }>(`select ${i} as n`).execute(db)).rows).toEqual([{ n: i }]);
    const names = await prepared();
    expect([...names.keys()].some((text) => text.includes('$17'))).toBe(false);
    // 256 texts named, all but the one PostgreSQL refused prepared here.
    expect(names.size).toBe(255);
    expect(names.has('select 299 as n')).toBe(false);
  });
});
