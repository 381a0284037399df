import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createCustomer, testDatabaseUrl, useHarness } from '../helpers/harness.js';
import { longestStallDuring } from '../helpers/loop-watch.js';
import { csrfOf, InjectBrowser } from '../web/browser.js';

// A staff member's UI import of a large file: its upload, check and apply leave the serving
// node's event loop free. Run in the node, the check and the apply held it for 100 to 200 ms of
// its own work at a time (and a node that moved the upload's state rewrote the file's row on
// SQLite); they now run in a child process, and the upload is streamed to disk. What counts is the
// loop's own work within its longest gap (`longestCpu`): on a machine busier than its cores, the
// gap itself also counts the waits for a core. The best of three tries counts.

const run = promisify(execFile);
const h = useHarness({ listen: true });

/** Backlinks in the file: about 11 MiB of JSON, near the upload's 12 MiB limit. */
const backlinks = 37_000;

// Written and sent by another process: the client's own work on an 11 MiB body (and its garbage)
// would hold this event loop. One site with `backlinks` backlinks and a few articles.
const uploader = `const [url, cookie, csrf, owner, site, backlinks] = process.argv.slice(1);
  const body = '<p>' + 'Words of an article to check and store. '.repeat(50) + '</p>';
  const file = JSON.stringify({ sites: [{
    owner, name: 'Large delivery ' + site, website_url: 'https://' + site + '.example',
    articles: Array.from({ length: 20 }, (_, i) => ({ title: 'A' + i, url: 'https://' + site + '.example/' + i, status: 'published', published_at: '2026-10-01T09:00:00Z', body })),
    backlinks: Array.from({ length: Number(backlinks) }, (_, i) => ({
      source_url: 'https://source-' + (i % 500) + '.example/articles/a-rather-long-path-for-backlink-' + i,
      target_url: 'https://' + site + '.example/', source_domain: 'source-' + (i % 500) + '.example',
      anchor_text: 'anchor text of backlink ' + i, anchor_type: 'partial', category: 'industry', status: 'live', acquired_at: '2026-10-02T10:00:00Z',
    })),
  }] });
  const form = new FormData();
  form.append('_csrf', csrf);
  form.append('file', new Blob([file], { type: 'application/json' }), 'delivery.json');
  const r = await fetch(url, { method: 'POST', headers: { cookie }, body: form, redirect: 'manual' });
  process.stdout.write(r.status + ' ' + r.headers.get('location') + ' ' + file.length);`;

describe(`a staff member's UI import of a large file (${testDatabaseUrl ? 'PostgreSQL' : 'SQLite'})`, () => {
  it('never holds the serving node’s event loop: upload, check and apply', { timeout: 900_000 }, async () => {
    const staff = await createCustomer(h.services, { staff: true });
    const customer = await createCustomer(h.services);
    const browser = new InjectBrowser(h.app);
    await browser.signIn(staff.email);
    const cookie = `${browser.sessionCookieName}=${browser.cookie}`;
    const base = h.settings.publicUrl;

    const progress = async (location: string) => (await (await fetch(`${base}${location}/progress`, { headers: { cookie } })).json()) as { state: string; rows: number; of: number };
    const until = async (location: string, state: string) => {
      for (;;) {
        const now = await progress(location);
        if (now.state !== state) return now;
        await sleep(200);
      }
    };

    let best = Number.POSITIVE_INFINITY;
    for (let attempt = 0; attempt < 3 && best >= 100; attempt++) {
      const csrf = csrfOf((await browser.get('/app/staff/imports')).body);
      const { result, longestCpu } = await longestStallDuring(async () => {
        const { stdout } = await run(process.execPath, ['--input-type=module', '-e', uploader, `${base}/app/staff/imports`, cookie, csrf, customer.email, `large-${attempt}`, String(backlinks)]);
        const [status, location, size] = stdout.split(' ') as [string, string, string];
        expect(status).toBe('303');
        expect(Number(size)).toBeGreaterThan(10 * 1_048_576);
        const checked = await until(location, 'checking');
        const applying = await fetch(`${base}${location}/apply`, {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ _csrf: csrf }).toString(),
          redirect: 'manual',
        });
        return { checked, applying: applying.status, applied: await until(location, 'applying') };
      });
      expect(result.checked.state).toBe('planned');
      expect(result.applying).toBe(303);
      expect(result.applied).toMatchObject({ state: 'applied', rows: backlinks + 21, of: backlinks + 21 });
      best = Math.min(best, longestCpu);
    }
    const stored = await h.services.db.kysely.selectFrom('backlinks').select((eb) => eb.fn.countAll().as('n')).where('account_id', '=', customer.accountId).executeTakeFirstOrThrow();
    expect(Number(stored.n) % backlinks).toBe(0);
    expect(best).toBeLessThan(100);
  });
});
