import { beforeAll, describe, expect, it } from 'vitest';
import { safeNext } from '../../src/web/session.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { decodeEntities, InjectBrowser, password } from './browser.js';

/** `next=` values that try to leave the service, or to break the Location header. */
const hostile = [
  '//evil.example',
  '///evil.example',
  '////evil.example/x',
  '/\\evil.example',
  '\\\\evil.example',
  '\\/evil.example',
  '/\\/evil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  '/\r/evil.example',
  '/\r\nSet-Cookie: x=1',
  '\t//evil.example',
  ' //evil.example',
  '\u0000//evil.example',
  'https://evil.example',
  'HTTPS://evil.example/app',
  'http:evil.example',
  'http:/evil.example',
  'https:\\\\evil.example',
  '//evil.example%2f',
  '/%2f%2fevil.example',
  '/%5cevil.example',
  '%2f%2fevil.example',
  '/%09/evil.example',
  '/.//evil.example',
  '/..//evil.example',
  '/app/..//evil.example',
  '//localhost@evil.example',
  'http://localhost@evil.example/',
  'http://user:pass@localhost/app',
  '//evil\u3002example',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  '/app\u2028',
  '/\u2028/evil.example',
  '/\u{1F600}',
  '\u{1F600}',
  '/app?q=\u{1F600}#\u2029',
  '%',
  '%zz',
  '',
  '   ',
  'app',
  `/${'a'.repeat(5000)}`,
];

describe('redirects after sign-in stay on the service', () => {
  const h = useHarness();
  let origin: string;
  let email: string;

  beforeAll(async () => {
    origin = new URL(h.settings.publicUrl).origin;
    email = (await createCustomer(h.services)).email;
  });

  const sameOrigin = (location: unknown) => new URL(String(location), h.settings.publicUrl).origin === origin && !String(location).startsWith('//');

  it('resolves next with the URL parser and keeps only the service’s origin', () => {
    const base = 'http://localhost:3000';
    expect(safeNext('/app/sites/1?month=2026-11#top', base)).toBe('/app/sites/1?month=2026-11#top');
    expect(safeNext('http://localhost:3000/app/activity', base)).toBe('/app/activity');
    expect(safeNext('/oauth/authorize?client_id=a&state=b', base)).toBe('/oauth/authorize?client_id=a&state=b');
    expect(safeNext('/app/\u{1F600}', base)).toBe('/app/%F0%9F%98%80');
    for (const value of hostile) {
      const next = safeNext(value, base);
      expect(new URL(next, base).origin, JSON.stringify(value)).toBe(base);
      expect(next.startsWith('/') && !next.startsWith('//'), JSON.stringify(value)).toBe(true);
      expect(/^[\x21-\x7e]*$/.test(next), JSON.stringify(value)).toBe(true);
    }
    expect(safeNext(['/app'], base)).toBe('/app');
    expect(safeNext(undefined, base)).toBe('/app');
  });

  it('sends no hostile next anywhere else, and never answers 5xx (sign-in form and signed-in GET)', async () => {
    const signedOut = new InjectBrowser(h.app);
    const signedIn = new InjectBrowser(h.app);
    await signedIn.signIn(email);
    for (const value of hostile) {
      const url = `/app/sign-in?next=${encodeURIComponent(value)}`;
      const form = await signedOut.get(url);
      expect(form.statusCode, JSON.stringify(value)).toBe(200);
      const kept = decodeEntities(/name="next" value="([^"]*)"/.exec(form.body)![1]!);
      expect(sameOrigin(kept), JSON.stringify(value)).toBe(true);

      const already = await signedIn.get(url);
      expect(already.statusCode, JSON.stringify(value)).toBeLessThan(400);
      expect(sameOrigin(already.headers.location), JSON.stringify(value)).toBe(true);

      const browser = new InjectBrowser(h.app);
      const token = await browser.csrf();
      const posted = await browser.post('/app/sign-in', { _csrf: token, email, password, next: value });
      if (value.includes('\u0000')) {
        // No form field may hold U+0000 (nul-forms.test.ts); the sign-in form's own next never does.
        expect(posted.statusCode, JSON.stringify(value)).toBe(422);
        expect(posted.headers.location).toBeUndefined();
        continue;
      }
      expect(posted.statusCode, JSON.stringify(value)).toBe(303);
      expect(sameOrigin(posted.headers.location), `${JSON.stringify(value)} → ${String(posted.headers.location)}`).toBe(true);
    }
  });

  it('takes raw control characters in the query without a 5xx', async () => {
    const browser = new InjectBrowser(h.app);
    await browser.signIn(email);
    for (const raw of ['%0d%0aLocation:%20https://evil.example', '%E2%80%A8', '%F0%9F%98%80', '%ff%fe', '%', '/%2F%2Fevil.example', '%5C%5Cevil.example']) {
      const response = await browser.get(`/app/sign-in?next=${raw}`);
      expect(response.statusCode, raw).toBeLessThan(500);
      if (response.headers.location) expect(sameOrigin(response.headers.location), raw).toBe(true);
    }
  });
});
