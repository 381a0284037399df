import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { protectedLinksOf } from '../../src/core/protected-anchors.js';
import { namedChangesMax } from '../../src/db/change-topics.js';
import { connect } from '../../src/db/connect.js';
import { articleDerived } from '../../src/db/migrations/006_article_derived.js';
import { sqliteChangeTriggers } from '../../src/db/migrations/017_change_counts.js';
import { postgresArticleTrigger, sqliteArticleTriggers } from '../../src/db/migrations/027_article_change_ids.js';
import { migrate, migrationContext } from '../../src/db/migrate.js';
import { issueMcpToken } from '../fuzz/hostile.js';
import { createCustomer, dialectName, runElsewhere, useHarness } from '../helpers/harness.js';
import {
  articleRow,
  BACKLINK,
  getArticle,
  INTERNAL,
  patch,
  PLAIN_BODY,
  PROTECTED_BODY,
  put,
  seedArticle,
  type SeededArticle,
  send,
} from '../helpers/write-fixtures.js';

// The read path does no repeated work: protected links are stored with the body, key use is
// recorded in memory and written in batches, SQLite statements are prepared once.

const h = useHarness();
let seeded: SeededArticle;

beforeAll(async () => {
  seeded = await seedArticle(h.services);
});

const storedLinks = async (id: number) => JSON.parse((await articleRow(h, id)).protected_links ?? 'null');

describe('protected_links stored with the body', () => {
  it('import stores them, and GET answers them', async () => {
    expect(await storedLinks(seeded.articleId)).toEqual(protectedLinksOf(PROTECTED_BODY));
    const response = await getArticle(h, seeded.articleId, seeded.customer.key);
    expect(response.status).toBe(200);
    expect((response.body as { data: { protected_links: unknown } }).data.protected_links).toEqual([
      { href: 'https://partner.example/page', text: 'partner page', type: 'backlink' },
      { href: '/guides/setup', text: 'our setup guide', type: 'internal' },
    ]);
  });

  it('every write that changes the body stores the links of the new body; a dry run answers them without storing', async () => {
    const { customer, articleId } = await seedArticle(h.services, {}, undefined);
    const moved = `<p>${INTERNAL} first now.</p><p>Then ${BACKLINK}.</p>`;
    const dry = await put(h, articleId, customer.key, { body: moved }, { query: '?dry_run=true' });
    expect(dry.status).toBe(200);
    expect((dry.body as { data: { protected_links: { type: string }[] } }).data.protected_links.map((l) => l.type)).toEqual(['internal', 'backlink']);
    expect(await storedLinks(articleId)).toEqual(protectedLinksOf(PROTECTED_BODY));

    expect((await put(h, articleId, customer.key, { body: moved })).status).toBe(200);
    expect(await storedLinks(articleId)).toEqual(protectedLinksOf(moved));
    const edited = await patch(h, articleId, customer.key, { replacements: [{ find: 'first now', replace: 'comes first' }] });
    expect(edited.status).toBe(200);
    const row = await articleRow(h, articleId);
    expect(JSON.parse(row.protected_links!)).toEqual(protectedLinksOf(row.body));
    const read = await getArticle(h, articleId, customer.key);
    expect((read.body as { data: { protected_links: unknown } }).data.protected_links).toEqual(protectedLinksOf(row.body));
  });

  it('a refused write leaves them as they were', async () => {
    const { customer, articleId } = await seedArticle(h.services);
    const refused = await put(h, articleId, customer.key, { body: PLAIN_BODY });
    expect(refused.status).toBe(422);
    expect(await storedLinks(articleId)).toEqual(protectedLinksOf(PROTECTED_BODY));
  });

  it('migration 006 fills them for articles written before it', async () => {
    const { articleId } = await seedArticle(h.services);
    const plain = await seedArticle(h.services, { body: PLAIN_BODY });
    const db = h.services.db.kysely;
    // PostgreSQL's trigger of the column (migration 027) came after 006.
    if (dialectName === 'postgres') await sql`drop trigger articles_changed on articles`.execute(db);
    await sql`alter table articles drop column protected_links`.execute(db);
    await db.transaction().execute((trx) => articleDerived.up(migrationContext(trx, h.services.db.dialect)));
    if (dialectName === 'postgres') await sql.raw(postgresArticleTrigger).execute(db);
    expect(await storedLinks(articleId)).toEqual(protectedLinksOf(PROTECTED_BODY));
    expect(await storedLinks(plain.articleId)).toEqual([]);
    const missing = await db.selectFrom('articles').select('id').where('protected_links', 'is', null).execute();
    expect(missing).toEqual([]);
  });

  it('a row written without them (an older node) is still read right', async () => {
    const { customer, articleId } = await seedArticle(h.services);
    await h.services.db.kysely.updateTable('articles').set({ protected_links: null }).where('id', '=', articleId).execute();
    const read = await getArticle(h, articleId, customer.key);
    expect((read.body as { data: { protected_links: unknown } }).data.protected_links).toEqual(protectedLinksOf(PROTECTED_BODY));
  });
});

describe('key use is recorded off the request path', () => {
  const lastUsed = async (keyId: number) =>
    (await h.services.db.kysely.selectFrom('api_keys').select('last_used_at').where('id', '=', keyId).executeTakeFirstOrThrow()).last_used_at;

  it('a read does not write last_used_at itself; the batched flush does, once a minute per key', async () => {
    const { customer, articleId } = await seedArticle(h.services);
    await h.services.keys.flushUses();
    h.clock.set('2026-11-15T12:00:00Z');
    expect((await getArticle(h, articleId, customer.key)).status).toBe(200);
    expect(await lastUsed(customer.keyId)).toBeNull();
    await h.services.keys.flushUses();
    expect(await lastUsed(customer.keyId)).toBe('2026-11-15T12:00:00Z');

    h.clock.set('2026-11-15T12:00:30Z');
    await getArticle(h, articleId, customer.key);
    await h.services.keys.flushUses();
    expect(await lastUsed(customer.keyId)).toBe('2026-11-15T12:00:00Z');

    h.clock.set('2026-11-15T12:01:05Z');
    await getArticle(h, articleId, customer.key);
    await h.services.keys.flushUses();
    expect(await lastUsed(customer.keyId)).toBe('2026-11-15T12:01:05Z');
  });

  it('a key revoked by another process (the CLI) is refused within 100 ms, though this one has seen it', async () => {
    const { customer, articleId } = await seedArticle(h.services);
    expect((await getArticle(h, articleId, customer.key)).status).toBe(200);
    const other = connect(h.settings.databaseUrl, h.settings.dataDir);
    try {
      await other.kysely.updateTable('api_keys').set({ revoked_at: '2026-11-15T12:00:00Z' }).where('id', '=', customer.keyId).execute();
    } finally {
      await other.kysely.destroy();
    }
    await setTimeout(150);
    expect((await getArticle(h, articleId, customer.key)).status).toBe(401);
  });

  it('a key revoked while its first lookup is under way is refused on the next request', async () => {
    const { customer, articleId } = await seedArticle(h.services);
    const [first] = await Promise.all([getArticle(h, articleId, customer.key), h.services.keys.revoke(customer.keyId)]);
    expect([200, 401]).toContain(first.status);
    expect((await getArticle(h, articleId, customer.key)).status).toBe(401);
  });

  it('a revoked key is refused and its use is not recorded', async () => {
    const { customer, articleId } = await seedArticle(h.services);
    await h.services.keys.revoke(customer.keyId);
    expect((await getArticle(h, articleId, customer.key)).status).toBe(401);
    await h.services.keys.flushUses();
    expect(await lastUsed(customer.keyId)).toBeNull();
  });
});

/** Runs `statement` on a connection of its own, as the CLI, another node or an outside script would. */
const elsewhere = (statement: string) => runElsewhere(h, statement);

describe('sites kept in memory', () => {
  const listArticles = (seeded: SeededArticle) => send(h.app, 'GET', `/api/v1/sites/${seeded.siteId}/articles`, seeded.customer.key);

  it('a site moved to another account elsewhere is not found for its old owner within 100 ms', async () => {
    const seeded = await seedArticle(h.services);
    const other = await seedArticle(h.services);
    for (let i = 0; i < 3; i++) {
      expect((await listArticles(seeded)).status).toBe(200);
      await setTimeout(100);
    }
    await elsewhere(`update sites set account_id = ${other.customer.accountId} where id = ${seeded.siteId}`);
    await setTimeout(150);
    expect((await listArticles(seeded)).status).toBe(404);
  });

  it.skipIf(dialectName !== 'postgres')('PostgreSQL: a kept site costs no query until a notice of a change to sites arrives', async () => {
    const seeded = await seedArticle(h.services);
    const other = await seedArticle(h.services);
    for (let i = 0; i < 3; i++) {
      expect((await listArticles(seeded)).status).toBe(200);
      await setTimeout(100);
    }
    await elsewhere('alter table sites disable trigger sites_changed');
    try {
      await elsewhere(`update sites set account_id = ${other.customer.accountId} where id = ${seeded.siteId}`);
    } finally {
      await elsewhere('alter table sites enable trigger sites_changed');
    }
    expect((await listArticles(seeded)).status).toBe(200);
    await elsewhere(`update sites set name = name where id = ${other.siteId}`);
    await setTimeout(150);
    expect((await listArticles(seeded)).status).toBe(404);
  });
});

describe.skipIf(dialectName !== 'postgres')('PostgreSQL: valid keys kept in memory while the node hears of key changes', () => {
  /** A key the node has looked up and keeps: it has listened, and the notice of its start is read. */
  const keptKey = async (seeded?: SeededArticle) => {
    seeded ??= await seedArticle(h.services);
    for (let i = 0; i < 3; i++) {
      expect((await getArticle(h, seeded.articleId, seeded.customer.key)).status).toBe(200);
      await setTimeout(100);
    }
    return seeded;
  };
  const revokeUnheard = async (keyId: number) => {
    await elsewhere('alter table api_keys disable trigger api_keys_changed');
    try {
      await elsewhere(`update api_keys set revoked_at = '2026-11-15T12:00:00Z' where id = ${keyId}`);
    } finally {
      await elsewhere('alter table api_keys enable trigger api_keys_changed');
    }
  };

  it('a kept key costs no query; a revocation elsewhere is heard and refused within 100 ms', async () => {
    const { customer, articleId } = await keptKey();
    // Revoked without its notice: the node still answers from memory, so it did not look the key up.
    await revokeUnheard(customer.keyId);
    expect((await getArticle(h, articleId, customer.key)).status).toBe(200);
    // The trigger's notice reaches the node: the key is looked up again, and refused.
    await elsewhere(`update api_keys set revoked_at = '2026-11-15T12:00:00Z' where id = ${customer.keyId}`);
    await setTimeout(150);
    expect((await getArticle(h, articleId, customer.key)).status).toBe(401);
  });

  it.each([
    ['of sites', 'of a topic this code does not know (a newer node’s)', () => 'sites', () => 'a later topic'],
    ['naming an article', 'naming it by an id this code cannot read', (id: number) => `articles:${id}`, (id: number) => `articles:a${id}`],
  ])('a notice %s leaves keys kept; one %s forgets them', async (_kept, _forgot, keptPayload, forgetPayload) => {
    const { customer, articleId } = await keptKey();
    await revokeUnheard(customer.keyId);
    await elsewhere(`select pg_notify('anchorage_changes', '${keptPayload(articleId)}')`);
    await setTimeout(150);
    expect((await getArticle(h, articleId, customer.key)).status).toBe(200);
    await elsewhere(`select pg_notify('anchorage_changes', '${forgetPayload(articleId)}')`);
    await setTimeout(150);
    expect((await getArticle(h, articleId, customer.key)).status).toBe(401);
  });

  it('a change to the key’s user is heard too: made staff, the key reads every account', async () => {
    const { customer } = await keptKey();
    const another = await seedArticle(h.services);
    expect((await getArticle(h, another.articleId, customer.key)).status).toBe(404);
    await elsewhere(`update users set staff = 1 where id = ${customer.userId}`);
    await setTimeout(150);
    expect((await getArticle(h, another.articleId, customer.key)).status).toBe(200);
  });

  it('while its listening connection is down the node looks every key up, and listens again', async () => {
    const { customer, articleId } = await keptKey();
    await elsewhere(`select pg_terminate_backend(pid) from pg_stat_activity where (query like 'listen anchorage_changes;%' or query = 'select pg_notify($1, $2)') and pid <> pg_backend_pid()`);
    await setTimeout(100);
    await revokeUnheard(customer.keyId);
    expect((await getArticle(h, articleId, customer.key)).status).toBe(401);

    // Past the pause after a failure, the next lookup listens again, and keys are kept again.
    await setTimeout(1_000);
    const other = await keptKey();
    await revokeUnheard(other.customer.keyId);
    expect((await getArticle(h, other.articleId, other.customer.key)).status).toBe(200);
  });
});

describe.skipIf(dialectName === 'postgres')('SQLite: keys kept in memory while other connections commit', () => {
  /** Runs `statement` elsewhere with `trigger` (migration 017's) dropped: a change no count moves. */
  const unheard = async (trigger: string, statement: string) => {
    await elsewhere(`drop trigger ${trigger}`);
    try {
      await elsewhere(statement);
    } finally {
      await elsewhere(sqliteChangeTriggers.find((create) => create.startsWith(`create trigger ${trigger} `))!);
    }
  };

  it('other connections’ commits leave a kept key kept (the off-loop thread restarts the log in one); a change of keys or users elsewhere is seen within 100 ms', async () => {
    const { customer, articleId } = await seedArticle(h.services);
    const another = await seedArticle(h.services);
    for (let i = 0; i < 3; i++) {
      expect((await getArticle(h, articleId, customer.key)).status).toBe(200);
      await setTimeout(100);
    }
    // Revoked elsewhere without its count: the node answers from memory, so it did not look the key up.
    await unheard('api_keys_changed', `update api_keys set revoked_at = '2026-11-15T12:00:00Z' where id = ${customer.keyId}`);
    await elsewhere('pragma user_version = 0');
    await setTimeout(150);
    expect((await getArticle(h, articleId, customer.key)).status).toBe(200);
    // A change of the key's user is counted: the key is looked up again, and refused.
    await elsewhere(`update users set staff = 0 where id = ${customer.userId}`);
    await setTimeout(150);
    expect((await getArticle(h, articleId, customer.key)).status).toBe(401);
    expect((await getArticle(h, another.articleId, another.customer.key)).status).toBe(200);
  });
});

describe('SQLite prepared statements', () => {
  it('reuses a statement, also after a stream on it was left early', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'anchorage-statements-'));
    const db = connect(undefined, dir);
    try {
      await migrate(db);
      const kysely = db.kysely;
      await kysely.insertInto('accounts').values([1, 2, 3].map((i) => ({ name: `a${i}`, created_at: '2026-11-15T12:00:00Z' }))).execute();
      const names = () => kysely.selectFrom('accounts').select('name').orderBy('id');
      for (let i = 0; i < 3; i++) expect((await names().execute()).map((r) => r.name)).toEqual(['a1', 'a2', 'a3']);
      for await (const row of names().stream()) {
        expect(row.name).toBe('a1');
        break;
      }
      expect((await names().execute()).map((r) => r.name)).toEqual(['a1', 'a2', 'a3']);
      const streamed: string[] = [];
      for await (const row of names().stream()) streamed.push(row.name);
      expect(streamed).toEqual(['a1', 'a2', 'a3']);
      // A different statement text (the parameters are bound, not part of it) still answers its own rows.
      const one = await kysely.selectFrom('accounts').select('name').where('name', '=', 'a2').execute();
      expect(one).toEqual([{ name: 'a2' }]);
    } finally {
      await db.kysely.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('article answers kept in memory', () => {
  /** An article whose answer the node keeps: read a few times, so a PostgreSQL node listens by then. */
  const keptArticle = async (options: Parameters<typeof seedArticle>[1] = {}, customer?: Parameters<typeof seedArticle>[2]) => {
    const seeded = await seedArticle(h.services, options, customer);
    for (let i = 0; i < 3; i++) {
      expect((await getArticle(h, seeded.articleId, seeded.customer.key)).status).toBe(200);
      await setTimeout(100);
    }
    return seeded;
  };
  const bodyOf = (response: { body: unknown }) => (response.body as { data: { body: string } }).data.body;
  /** Changes an article elsewhere with its notice (PostgreSQL) or count (SQLite) switched off. */
  const unheard = async (statement: string) => {
    if (dialectName === 'postgres') {
      await elsewhere('alter table articles disable trigger articles_changed');
      try {
        await elsewhere(statement);
      } finally {
        await elsewhere('alter table articles enable trigger articles_changed');
      }
      return;
    }
    await elsewhere('drop trigger articles_changed');
    try {
      await elsewhere(statement);
    } finally {
      await elsewhere(sqliteArticleTriggers.find((create) => create.startsWith('create trigger articles_changed '))!);
    }
  };
  const moved = `<p>Moved on.</p>${PROTECTED_BODY}`;

  it('a kept answer costs no query; this node’s own edit is answered at once, with its new ETag', async () => {
    const { customer, articleId } = await keptArticle();
    // Changed without its notice or count: the node answers from memory, so it did not read the row.
    await unheard(`update articles set body = '<p>Unheard.</p>' where id = ${articleId}`);
    const kept = await getArticle(h, articleId, customer.key);
    expect(bodyOf(kept)).toBe(PROTECTED_BODY);
    // The edit starts from the stored row, whose body has no protected links now: it adds none.
    const edited = await put(h, articleId, customer.key, { body: '<p>Edited.</p>' });
    expect(edited.status).toBe(200);
    const read = await getArticle(h, articleId, customer.key);
    expect(bodyOf(read)).toBe('<p>Edited.</p>');
    expect(read.headers.etag).toBe(edited.headers.etag);
    expect(read.headers.etag).not.toBe(kept.headers.etag);
  });

  it('an edit elsewhere (another node, the CLI) is answered within 100 ms', async () => {
    const { customer, articleId } = await keptArticle();
    await elsewhere(`update articles set body = '${moved}', version = version + 1 where id = ${articleId}`);
    await setTimeout(150);
    const read = await getArticle(h, articleId, customer.key);
    expect(bodyOf(read)).toBe(moved);
    expect(read.headers.etag).toBe(`"a${articleId}-v2"`);
  });

  it('a kept answer is still not found for another account’s key, and found for staff', async () => {
    const { articleId } = await keptArticle();
    const other = await seedArticle(h.services);
    expect((await getArticle(h, articleId, other.customer.key)).status).toBe(404);
    const staff = await createCustomer(h.services, { staff: true });
    expect(bodyOf(await getArticle(h, articleId, staff.key))).toBe(PROTECTED_BODY);
  });

  it('another account’s read keeps nothing: it is not found without the article being read', async () => {
    const { customer, articleId } = await seedArticle(h.services);
    const other = await seedArticle(h.services);
    for (let i = 0; i < 3; i++) {
      expect((await getArticle(h, articleId, other.customer.key)).status).toBe(404);
      await setTimeout(100);
    }
    await unheard(`update articles set body = '${moved}' where id = ${articleId}`);
    expect(bodyOf(await getArticle(h, articleId, customer.key))).toBe(moved);
  });

  it('a get_article tool call answers from the same kept answer, and an edit elsewhere within 100 ms', async () => {
    const { customer, articleId } = await keptArticle();
    const token = await issueMcpToken(h, customer.userId);
    const toolBody = async () => {
      const response = await h.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_article', arguments: { article_id: articleId } } },
      });
      return (response.json() as { result: { structuredContent: { data: { body: string } } } }).result.structuredContent.data.body;
    };
    await unheard(`update articles set body = '<p>Unheard.</p>' where id = ${articleId}`);
    expect(await toolBody()).toBe(PROTECTED_BODY);
    await elsewhere(`update articles set body = '${moved}', version = version + 1 where id = ${articleId}`);
    await setTimeout(150);
    expect(await toolBody()).toBe(moved);
  });

  it('an edit of one article, here or elsewhere, leaves the other articles’ kept answers kept', async () => {
    const edited = await keptArticle();
    const other = await keptArticle({}, edited.customer);
    // Changed without its notice or count: while kept, the other article is answered from memory.
    await unheard(`update articles set body = '<p>Unheard.</p>' where id = ${other.articleId}`);
    expect((await put(h, edited.articleId, edited.customer.key, { body: moved })).status).toBe(200);
    await elsewhere(`update articles set body = '<p>Elsewhere.</p>', version = version + 1 where id = ${edited.articleId}`);
    await setTimeout(150);
    expect(bodyOf(await getArticle(h, edited.articleId, edited.customer.key))).toBe('<p>Elsewhere.</p>');
    expect(bodyOf(await getArticle(h, other.articleId, other.customer.key))).toBe(PROTECTED_BODY);
  });

  it('more changes at once than a watch names forget every kept answer', async () => {
    const { customer, articleId } = await keptArticle();
    await unheard(`update articles set body = '<p>Unheard.</p>' where id = ${articleId}`);
    await elsewhere(
      dialectName === 'postgres'
        ? `select pg_notify('anchorage_changes', 'articles:' || (-n)) from generate_series(1, ${namedChangesMax + 1}) n`
        : `with recursive n(v) as (select 1 union all select v + 1 from n where v <= ${namedChangesMax}) insert into article_changes (article_id) select -v from n`,
    );
    await setTimeout(150);
    expect(bodyOf(await getArticle(h, articleId, customer.key))).toBe('<p>Unheard.</p>');
  });

  it.skipIf(dialectName === 'postgres')('SQLite: changes dropped from the log before the node read them forget every kept answer', async () => {
    const { customer, articleId } = await keptArticle();
    await unheard(`update articles set body = '<p>Unheard.</p>' where id = ${articleId}`);
    await elsewhere('insert into article_changes (article_id) values (-1)');
    await elsewhere('delete from article_changes where seq = (select max(seq) from article_changes)');
    await elsewhere('insert into article_changes (article_id) values (-2)');
    await setTimeout(150);
    expect(bodyOf(await getArticle(h, articleId, customer.key))).toBe('<p>Unheard.</p>');
  });

  it('a body over 64 Ki characters is read every time', async () => {
    const large = `${PROTECTED_BODY}<p>${'long text '.repeat(7_000)}</p>`;
    const { customer, articleId } = await keptArticle({ body: large });
    await unheard(`update articles set body = '${moved}' where id = ${articleId}`);
    expect(bodyOf(await getArticle(h, articleId, customer.key))).toBe(moved);
  });
});
