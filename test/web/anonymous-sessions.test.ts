import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, dialectName, startHarness, useHarness } from '../helpers/harness.js';
import { csrfOf, InjectBrowser, password } from './browser.js';

const h = useHarness({ env: { ALLOW_SIGNUP: 'true' } });
let customer: Awaited<ReturnType<typeof createCustomer>>;

beforeAll(async () => {
  customer = await createCustomer(h.services);
});

async function sessionRows(): Promise<number> {
  const row = await h.services.db.kysely
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const csrfCookieOf = (response: LightMyRequestResponse) => response.cookies.find((c) => c.name === 'anchorage_csrf');

function postSignIn(form: Record<string, string>, cookie?: string) {
  return h.app.inject({
    method: 'POST',
    url: '/app/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    payload: new URLSearchParams(form).toString(),
  });
}

describe(`anonymous visitors (${dialectName})`, () => {
  it('get no database session: 20 sign-in pages and every other anonymous page store no row', async () => {
    const before = await sessionRows();
    for (let i = 0; i < 20; i++) {
      const page = await h.app.inject({ method: 'GET', url: '/app/sign-in' });
      expect(page.statusCode).toBe(200);
      expect(page.cookies.find((c) => c.name === 'anchorage_session')).toBeUndefined();
      // The form's token is the one in the visitor's CSRF cookie.
      expect(csrfOf(page.body)).toBe(csrfCookieOf(page)!.value);
    }
    for (const url of ['/app', '/app/sign-up', '/app/connect', '/oauth/authorize?client_id=x']) {
      expect((await h.app.inject({ method: 'GET', url })).statusCode).toBeLessThan(500);
    }
    expect(await sessionRows()).toBe(before);
  });

  it('keep one CSRF cookie (HttpOnly, SameSite=Lax) across pages, and sign in with it: then a session row, the cookie gone', async () => {
    const browser = new InjectBrowser(h.app);
    const first = await browser.get('/app/sign-in');
    const cookie = csrfCookieOf(first)!;
    expect(cookie.httpOnly).toBe(true);
    expect(String(cookie.sameSite).toLowerCase()).toBe('lax');
    expect(cookie.path).toBe('/');
    const second = await browser.get('/app/sign-in');
    expect(csrfCookieOf(second)).toBeUndefined();
    expect(csrfOf(second.body)).toBe(cookie.value);

    const before = await sessionRows();
    const signedIn = await browser.signIn(customer.email);
    expect(signedIn.statusCode).toBe(303);
    expect(await sessionRows()).toBe(before + 1);
    expect(csrfCookieOf(signedIn)?.value).toBe('');
    expect((await browser.get('/app')).statusCode).toBe(200);

    const page = await browser.get('/app/connect');
    const out = await browser.post('/app/sign-out', { _csrf: csrfOf(page.body) });
    expect(out.statusCode).toBe(303);
    expect(await sessionRows()).toBe(before);
  });

  it('refuse a sign-in whose token does not match the visitor’s own cookie, storing nothing', async () => {
    const page = await h.app.inject({ method: 'GET', url: '/app/sign-in' });
    const token = csrfOf(page.body);
    const other = csrfCookieOf(await h.app.inject({ method: 'GET', url: '/app/sign-in' }))!.value;
    const form = { email: customer.email, password, next: '/app' };
    const before = await sessionRows();
    // A cross-site form carries no cookie; a forged one carries another visitor's token or none.
    for (const [sent, cookie] of [
      [{ ...form, _csrf: token }, undefined],
      [{ ...form, _csrf: token }, `anchorage_csrf=${other}`],
      [{ ...form }, `anchorage_csrf=${token}`],
      [{ ...form, _csrf: '' }, 'anchorage_csrf='],
      [{ ...form, _csrf: 'short' }, 'anchorage_csrf=short'],
    ] as const) {
      const refused = await postSignIn(sent, cookie);
      expect(refused.statusCode).toBe(403);
      expect(refused.cookies.find((c) => c.name === 'anchorage_session')).toBeUndefined();
    }
    expect(await sessionRows()).toBe(before);
    const accepted = await postSignIn({ ...form, _csrf: token }, `anchorage_csrf=${token}`);
    expect(accepted.statusCode).toBe(303);
    expect(await sessionRows()).toBe(before + 1);
  });

  it('store nothing for a wrong password (the page keeps the token), and sign up with the same cookie', async () => {
    const browser = new InjectBrowser(h.app);
    const token = await browser.csrf();
    const before = await sessionRows();
    const failed = await browser.post('/app/sign-in', { _csrf: token, email: customer.email, password: 'wrong password', next: '/app' });
    expect(failed.statusCode).toBe(401);
    expect(csrfOf(failed.body)).toBe(token);
    expect(await sessionRows()).toBe(before);
    const signUp = await browser.get('/app/sign-up');
    const created = await browser.post('/app/sign-up', {
      _csrf: csrfOf(signUp.body),
      email: `new-${Date.now()}@example.test`,
      password: 'a long enough password',
      account: 'New Co',
    });
    expect(created.statusCode).toBe(303);
    expect(await sessionRows()).toBe(before + 1);
    expect((await browser.get('/app')).statusCode).toBe(200);
  });

  it('behind https get a __Host- CSRF cookie that only this host can set, Secure', async () => {
    const secure = await startHarness({ env: { PUBLIC_URL: 'https://anchorage.example' } });
    try {
      const page = await secure.app.inject({ method: 'GET', url: '/app/sign-in' });
      const cookie = page.cookies.find((c) => c.name === '__Host-anchorage_csrf')!;
      expect(cookie.secure).toBe(true);
      expect(cookie.path).toBe('/');
      expect(cookie.domain).toBeUndefined();
      expect(page.cookies.find((c) => c.name === 'anchorage_csrf')).toBeUndefined();
      const token = csrfOf(page.body);
      const form = new URLSearchParams({ _csrf: token, email: 'nobody@example.test', password: 'x', next: '/app' }).toString();
      const post = (cookie: string) =>
        secure.app.inject({ method: 'POST', url: '/app/sign-in', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, payload: form });
      // The unprefixed name (which a sibling host could set) is not read there.
      expect((await post(`anchorage_csrf=${token}`)).statusCode).toBe(403);
      expect((await post(`__Host-anchorage_csrf=${token}`)).statusCode).toBe(401);
    } finally {
      await secure.close();
    }
  });

  it('behind https sign in with a __Host- session cookie: Secure, Path=/, no Domain; signing out clears it alike', async () => {
    const secure = await startHarness({ env: { PUBLIC_URL: 'https://anchorage.example' } });
    try {
      const user = await createCustomer(secure.services);
      const browser = new InjectBrowser(secure.app);
      const signedIn = await browser.signIn(user.email);
      expect(signedIn.statusCode).toBe(303);
      const cookie = signedIn.cookies.find((c) => c.name === '__Host-anchorage_session')!;
      expect(cookie).toBeDefined();
      expect(cookie).toMatchObject({ secure: true, path: '/', httpOnly: true });
      expect(cookie.domain).toBeUndefined();
      expect(signedIn.cookies.find((c) => c.name === 'anchorage_session')).toBeUndefined();
      expect((await browser.get('/app')).statusCode).toBe(200);
      // The unprefixed name, which a sibling host could set, signs nobody in there.
      const plain = await secure.app.inject({ method: 'GET', url: '/app', headers: { cookie: `anchorage_session=${cookie.value}` } });
      expect(plain.statusCode).toBe(303);

      const signedOut = await browser.post('/app/sign-out', { _csrf: await browser.csrf('/app') });
      expect(signedOut.statusCode).toBe(303);
      const cleared = signedOut.cookies.find((c) => c.name === '__Host-anchorage_session')!;
      expect(cleared).toMatchObject({ value: '', secure: true, path: '/' });
      expect(cleared.domain).toBeUndefined();
      const after = await secure.app.inject({ method: 'GET', url: '/app', headers: { cookie: `__Host-anchorage_session=${cookie.value}` } });
      expect(after.statusCode).toBe(303);
    } finally {
      await secure.close();
    }
  });

  it('over http keep the plain session cookie name, which https cannot carry', async () => {
    const browser = new InjectBrowser(h.app);
    const signedIn = await browser.signIn(customer.email);
    expect(signedIn.cookies.map((c) => c.name)).toContain('anchorage_session');
    expect(signedIn.cookies.find((c) => c.name === 'anchorage_session')!.secure).toBeFalsy();
  });
});
