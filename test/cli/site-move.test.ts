import { beforeAll, describe, expect, it } from 'vitest';
import { apiGet, seedSite, type SeededSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { cliTimeoutMs, runCli } from '../helpers/cli.js';

/**
 * Ownership follows the site: `anchorage site move` (or an operator's SQL) moves a site to another
 * account with its articles, backlinks and revisions; the old owner finds none of them any more,
 * the new owner reads and edits them, on the running service.
 */

const h = useHarness();
let env: NodeJS.ProcessEnv;
let previous: Awaited<ReturnType<typeof createCustomer>>;
let next: Awaited<ReturnType<typeof createCustomer>>;

const cli = (args: string[]) => runCli(args, { env });

const patch = (articleId: number, key: string, title: string) =>
  h.app.inject({
    method: 'PATCH',
    url: `/api/v1/articles/${articleId}`,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: { title },
  });

const seed = (owner: string, name: string) =>
  seedSite(h.services, owner, {
    name,
    website_url: `https://${name.toLowerCase()}.example`,
    articles: [
      { title: `${name} one`, url: `https://${name.toLowerCase()}.example/one`, status: 'published', published_at: '2026-10-01T09:00:00Z', body: '<p>One.</p>' },
      { title: `${name} two`, url: `https://${name.toLowerCase()}.example/two`, status: 'draft', body: '<p>Two.</p>' },
    ],
    backlinks: [
      {
        acquired_at: '2026-10-02T10:00:00Z',
        source_domain: 'src.example',
        source_url: 'https://src.example/a',
        target_url: `https://${name.toLowerCase()}.example/one`,
        anchor_text: 'one',
        anchor_type: 'exact',
        status: 'live',
        category: 'industry',
      },
    ],
  });

/** Seconds, not expect.poll's one, on a busy machine; few enough tries to stay under a key's 60 requests a minute. */
const poll = (message: string) => ({ message, timeout: 15_000, interval: 250 });

const siteIds = async (key: string): Promise<number[]> =>
  (await apiGet(h.app, '/api/v1/sites?per_page=100', key)).body.data.map((site: { id: number }) => site.id);

/** What each owner gets for the site and everything in it once the move has reached the service. */
async function expectMoved(site: SeededSite): Promise<void> {
  const [first, second] = site.articleIds as [number, number];
  // The service forgets what it kept of the site and its articles as each topic's change notice arrives.
  for (const url of [`/api/v1/sites/${site.siteId}/stats`, `/api/v1/sites/${site.siteId}/articles`, `/api/v1/sites/${site.siteId}/backlinks`, `/api/v1/articles/${first}`, `/api/v1/articles/${second}`]) {
    await expect.poll(async () => (await apiGet(h.app, url, previous.key)).status, poll(url)).toBe(404);
  }
  expect(await siteIds(previous.key)).not.toContain(site.siteId);
  expect((await patch(first, previous.key, 'Taken back')).statusCode).toBe(404);

  expect(await siteIds(next.key)).toContain(site.siteId);
  expect((await apiGet(h.app, `/api/v1/sites/${site.siteId}/stats`, next.key)).status).toBe(200);
  const articles = await apiGet(h.app, `/api/v1/sites/${site.siteId}/articles`, next.key);
  expect(articles.body.data.map((a: { id: number }) => a.id).sort()).toEqual([first, second].sort());
  expect((await apiGet(h.app, `/api/v1/sites/${site.siteId}/backlinks`, next.key)).body.data).toHaveLength(1);
  expect((await apiGet(h.app, `/api/v1/articles/${first}`, next.key)).status).toBe(200);
  const edited = await patch(first, next.key, 'Edited by the new owner');
  expect(edited.statusCode).toBe(200);
  expect(edited.json().data.title).toBe('Edited by the new owner');

  const kysely = h.services.db.kysely;
  for (const table of ['articles', 'backlinks'] as const) {
    const owners = await kysely.selectFrom(table).select('account_id').where('site_id', '=', site.siteId).execute();
    expect(new Set(owners.map((row) => row.account_id)), table).toEqual(new Set([next.accountId]));
  }
  const revisions = await kysely.selectFrom('revisions').select('account_id').where('article_id', 'in', site.articleIds).execute();
  expect(revisions.length).toBeGreaterThanOrEqual(3);
  expect(new Set(revisions.map((row) => row.account_id))).toEqual(new Set([next.accountId]));
}

beforeAll(async () => {
  env = { ...process.env, DATA_DIR: h.settings.dataDir, LOG_LEVEL: 'silent', NODE_ENV: 'test' };
  if (h.settings.databaseUrl) env.DATABASE_URL = h.settings.databaseUrl;
  else delete env.DATABASE_URL;
  previous = await createCustomer(h.services);
  next = await createCustomer(h.services);
});

// Each run of the CLI starts a Node process: seconds each on a busy machine.
describe('anchorage site move', { timeout: cliTimeoutMs }, () => {
  it('moves a site with its articles, backlinks and revisions; the old owner gets 404, the new one reads and edits', async () => {
    const site = await seed(previous.email, 'Moving');
    const other = await seed(previous.email, 'Staying');
    // Kept answers on the running service, which the move must make it forget.
    expect((await apiGet(h.app, `/api/v1/sites/${site.siteId}/stats`, previous.key)).status).toBe(200);
    expect((await apiGet(h.app, `/api/v1/articles/${site.articleIds[0]}`, previous.key)).status).toBe(200);

    const moved = await cli(['site', 'move', String(site.siteId), '--account', next.email.toUpperCase()]);
    expect(moved.stderr).toBe('');
    expect(moved.code).toBe(0);
    expect(JSON.parse(moved.stdout)).toEqual({
      site_id: site.siteId,
      account_id: next.accountId,
      previous_account_id: previous.accountId,
      articles: 2,
      backlinks: 1,
    });
    await expectMoved(site);
    // The old owner's other site stays where it was.
    expect((await apiGet(h.app, `/api/v1/articles/${other.articleIds[0]}`, previous.key)).status).toBe(200);
    expect((await patch(other.articleIds[0]!, previous.key, 'Still mine')).statusCode).toBe(200);
  });

  it('takes an account id, and moving to the same account changes nothing', async () => {
    const site = await seed(next.email, 'Numbered');
    const back = await cli(['site', 'move', String(site.siteId), '--account', String(previous.accountId)]);
    expect(back.code).toBe(0);
    expect(JSON.parse(back.stdout)).toMatchObject({ account_id: previous.accountId, previous_account_id: next.accountId, articles: 2 });
    await expect.poll(async () => (await apiGet(h.app, `/api/v1/sites/${site.siteId}/stats`, previous.key)).status, poll('stats')).toBe(200);
    expect((await apiGet(h.app, `/api/v1/articles/${site.articleIds[0]}`, next.key)).status).toBe(404);
    const again = await cli(['site', 'move', String(site.siteId), '--account', previous.email]);
    expect(JSON.parse(again.stdout)).toMatchObject({ account_id: previous.accountId, previous_account_id: previous.accountId });
  });

  it('refuses an unknown site or account, or a missing argument, and moves nothing', async () => {
    const site = await seed(previous.email, 'Refused');
    const refusals: [string[], string][] = [
      [['site', 'move', '999999', '--account', next.email], 'no site with id 999999'],
      [['site', 'move', String(site.siteId), '--account', 'nobody@example.test'], 'no account with id or user e-mail nobody@example.test'],
      [['site', 'move', String(site.siteId), '--account', '99999999999'], 'no account with id or user e-mail 99999999999'],
      [['site', 'move', String(site.siteId)], 'site move needs a site id and --account'],
      [['site', 'move', 'x', '--account', next.email], 'site move needs a site id and --account'],
    ];
    const answers = await Promise.all(refusals.map(([args]) => cli(args)));
    for (const [index, [args, message]] of refusals.entries()) {
      const refused = answers[index]!;
      expect(refused.code, args.join(' ')).toBe(1);
      expect(refused.stderr).toContain(message);
      expect(refused.stdout).toBe('');
    }
    const owner = await h.services.db.kysely.selectFrom('sites').select('account_id').where('id', '=', site.siteId).executeTakeFirstOrThrow();
    expect(owner.account_id).toBe(previous.accountId);
  });
});

describe('a site moved by SQL', () => {
  it('takes its articles, backlinks and revisions along too', async () => {
    const site = await seed(previous.email, 'Sequel');
    expect((await apiGet(h.app, `/api/v1/articles/${site.articleIds[1]}`, previous.key)).status).toBe(200);
    await h.services.db.kysely.updateTable('sites').set({ account_id: next.accountId }).where('id', '=', site.siteId).execute();
    await expectMoved(site);
  });
});
