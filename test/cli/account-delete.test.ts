import { beforeAll, describe, expect, it } from 'vitest';
import { apiGet, seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { cliTimeoutMs, runCli } from '../helpers/cli.js';
import { InjectBrowser } from '../web/browser.js';

/**
 * `anchorage account delete` deletes an account and all it owns when told its exact name; the
 * running service (another process) refuses the account's key as soon as it hears the change.
 * `anchorage export` prints the bytes the staff UI's download sends.
 */

const h = useHarness();
let env: NodeJS.ProcessEnv;

const cli = (args: string[]) => runCli(args, { env });

/** Seconds, not expect.poll's one, on a busy machine; few enough tries to stay under a key's 60 requests a minute. */
const poll = (message: string) => ({ message, timeout: 15_000, interval: 250 });

async function customerNamed(name: string) {
  const customer = await createCustomer(h.services);
  await h.services.db.kysely.updateTable('accounts').set({ name }).where('id', '=', customer.accountId).execute();
  const site = await seedSite(h.services, customer.email, {
    name,
    website_url: `https://${name.toLowerCase().replace(/\W+/g, '')}.example`,
    articles: [{ title: 'One', url: `https://${customer.accountId}.example/one`, status: 'published', published_at: '2026-10-01T09:00:00Z', body: '<p>One.</p>' }],
    backlinks: [{ source_url: 'https://src.example/a', target_url: `https://${customer.accountId}.example/one`, status: 'live', category: 'industry', acquired_at: '2026-10-02T10:00:00Z' }],
  });
  return { ...customer, name, site };
}

beforeAll(async () => {
  env = { ...process.env, DATA_DIR: h.settings.dataDir, LOG_LEVEL: 'silent', NODE_ENV: 'test' };
  if (h.settings.databaseUrl) env.DATABASE_URL = h.settings.databaseUrl;
  else delete env.DATABASE_URL;
});

// Each run of the CLI starts a Node process: seconds each on a busy machine.
describe('anchorage account delete', { timeout: cliTimeoutMs }, () => {
  it('refuses without the exact name, an unknown account and a missing argument, and deletes nothing', async () => {
    const customer = await customerNamed('Harbour Bakery');
    const staff = await createCustomer(h.services, { staff: true });
    const staffName = (await h.services.uiQueries.account(staff.accountId))!.name;
    const refusals: [string[], string][] = [
      [['account', 'delete', String(customer.accountId), '--confirm', 'harbour bakery'], 'Type the account\'s name exactly as it is written (“Harbour Bakery”) to delete it. Nothing was deleted.'],
      [['account', 'delete', customer.email, '--confirm', ''], 'Type the account\'s name exactly'],
      [['account', 'delete', 'nobody@example.test', '--confirm', 'Harbour Bakery'], 'no account with id or user e-mail nobody@example.test'],
      [['account', 'delete', String(customer.accountId)], 'account delete needs an account'],
      [['account', 'delete', '--confirm', 'Harbour Bakery'], 'account delete needs an account'],
      [['account', 'delete', staff.email, '--confirm', staffName], 'This account holds a staff user'],
    ];
    const answers = await Promise.all(refusals.map(([args]) => cli(args)));
    for (const [index, [args, message]] of refusals.entries()) {
      expect(answers[index]!.code, args.join(' ')).toBe(1);
      expect(answers[index]!.stderr, args.join(' ')).toContain(message);
      expect(answers[index]!.stdout).toBe('');
    }
    expect(await h.services.uiQueries.account(customer.accountId)).toBeDefined();
    expect((await apiGet(h.app, '/api/v1/sites', customer.key)).status).toBe(200);
  });

  it('deletes the account named by its id or a user’s e-mail; the running service refuses its key once it hears of it', async () => {
    const first = await customerNamed('Quay Florist');
    const second = await customerNamed('Dockside Café');
    expect((await apiGet(h.app, '/api/v1/sites', first.key)).status).toBe(200);
    const deleted = await cli(['account', 'delete', String(first.accountId), '--confirm', 'Quay Florist']);
    expect(deleted.stderr).toBe('');
    expect(deleted.code).toBe(0);
    expect(JSON.parse(deleted.stdout)).toEqual({
      account_id: first.accountId,
      name: 'Quay Florist',
      users: 1,
      sites: 1,
      articles: 1,
      revisions: 1,
      backlinks: 1,
      api_keys: 1,
      oauth_grants: 0,
      media: 0,
      activity_kept: expect.any(Number) as number,
    });
    await expect.poll(async () => (await apiGet(h.app, '/api/v1/sites', first.key)).status, poll('key')).toBe(401);
    expect(await h.services.uiQueries.account(first.accountId)).toBeUndefined();
    const record = await h.services.db.kysely.selectFrom('activity_log').selectAll().where('operation', '=', 'deleteAccount').executeTakeFirstOrThrow();
    expect(record).toMatchObject({ channel: 'cli', account_id: first.accountId, user_id: null, status: 200 });

    const byEmail = await cli(['account', 'delete', second.email.toUpperCase(), '--confirm', 'Dockside Café']);
    expect(byEmail.code).toBe(0);
    expect(JSON.parse(byEmail.stdout)).toMatchObject({ account_id: second.accountId, sites: 1 });
    await expect.poll(async () => (await apiGet(h.app, '/api/v1/sites', second.key)).status, poll('key')).toBe(401);
  });
});

describe('anchorage export and the staff download', { timeout: cliTimeoutMs }, () => {
  it('are the same bytes', async () => {
    const customer = await customerNamed('Export Bytes');
    const staff = await createCustomer(h.services, { staff: true });
    const browser = new InjectBrowser(h.app);
    await browser.signIn(staff.email);
    const download = await browser.get(`/app/staff/accounts/${customer.accountId}/export`);
    expect(download.statusCode).toBe(200);
    const printed = await cli(['export', '--account', String(customer.accountId)]);
    expect(printed.code).toBe(0);
    expect(download.rawPayload.equals(Buffer.from(printed.stdout))).toBe(true);
  });
});
