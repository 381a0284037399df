import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { useHarness } from '../helpers/harness.js';
import { newKey, type SeededArticle, seedArticle, send } from '../helpers/write-fixtures.js';

// Integers are written as integers, a parameter is given once under its
// own name, and every error body has the catalogue's shape, whatever failed.

const h = useHarness({ listen: true });
let a: SeededArticle;
let port: number;

beforeAll(async () => {
  port = Number(new URL(h.settings.publicUrl).port);
  a = await seedArticle(h.services);
});

// Each key has 60 requests a minute: a new key of the same user every 50 requests.
let key = { value: '', used: 50 };
async function get(path: string) {
  if (key.used >= 50) key = { value: (await newKey(h.services, a.customer.userId)).key, used: 0 };
  key.used += 1;
  return send(h.app, 'GET', path, key.value);
}

const lists = () => [
  ['listSites', '/api/v1/sites?'],
  ['listArticles', `/api/v1/sites/${a.siteId}/articles?`],
  ['listBacklinks', `/api/v1/sites/${a.siteId}/backlinks?`],
] as const;

const NOT_INTEGERS = ['1e3', '1E3', '+1', '01', '1.0', '1.5', '%201', '1%20', '0x10', '0b1', '1_0', '-1', '9007199254740993', '99999999999999999999999', 'Infinity', 'NaN', '%EF%BC%91'];

describe('integer query parameters', () => {
  it.each(['page', 'per_page'])('%s is refused with 422 naming it unless written in decimal digits', async (name) => {
    for (const [operation, path] of lists()) {
      for (const value of NOT_INTEGERS) {
        const res = await get(`${path}${name}=${value}`);
        expect(res.status, `${operation} ${name}=${value}`).toBe(422);
        expect(res.body).toEqual({ error: 'validation_failed', message: expect.any(String), fields: { [name]: [expect.any(String)] } });
      }
    }
  });

  it('decimal digits are read as the integer they write', async () => {
    for (const [, path] of lists()) {
      const res = await get(`${path}page=2&per_page=10`);
      expect(res.status).toBe(200);
      expect(res.body.meta).toMatchObject({ page: 2, per_page: 10 });
    }
    expect((await get('/api/v1/sites?page=9007199254740991')).body.meta.page).toBe(9007199254740991);
  });

  it('path ids that are not written as decimal digits name no resource (404)', async () => {
    for (const id of ['01', '+1', '1e0', '1.0', '0x1']) {
      expect((await get(`/api/v1/sites/${id}/articles`)).status, id).toBe(404);
      expect((await get(`/api/v1/articles/${id.replace('1', String(a.articleId))}`)).status, id).toBe(404);
    }
  });
});

describe('repeated and array parameters', () => {
  it('a repeated parameter is a 422 naming it, on every list and on stats', async () => {
    const cases = [
      ['/api/v1/sites?page=1&page=2', 'page'],
      ['/api/v1/sites?per_page=5&per_page=5', 'per_page'],
      [`/api/v1/sites/${a.siteId}/articles?status=draft&status=published`, 'status'],
      [`/api/v1/sites/${a.siteId}/articles?from=2026-01-01&from=2026-02-01&to=2026-03-01`, 'from'],
      [`/api/v1/sites/${a.siteId}/backlinks?to=2026-01-01&to=2026-02-01&from=2025-01-01`, 'to'],
      [`/api/v1/sites/${a.siteId}/stats?period=this_month&period=last_month`, 'period'],
    ] as const;
    for (const [path, field] of cases) {
      const res = await get(path);
      expect(res.status, path).toBe(422);
      expect(res.body.error).toBe('validation_failed');
      expect(Object.keys(res.body.fields), path).toEqual([field]);
    }
  });

  it('status[]=draft and other bracketed forms of a parameter are a 422 naming the key, never ignored', async () => {
    const cases = [
      [`/api/v1/sites/${a.siteId}/articles?status[]=draft`, 'status[]'],
      [`/api/v1/sites/${a.siteId}/articles?status%5B%5D=draft`, 'status[]'],
      [`/api/v1/sites/${a.siteId}/articles?status[0]=draft`, 'status[0]'],
      ['/api/v1/sites?page[]=2', 'page[]'],
      [`/api/v1/sites/${a.siteId}/stats?period[]=this_month`, 'period[]'],
      [`/api/v1/sites/${a.siteId}/backlinks?from[]=2026-01-01`, 'from[]'],
    ] as const;
    for (const [path, field] of cases) {
      const res = await get(path);
      expect(res.status, path).toBe(422);
      expect(res.body.fields, path).toEqual({ [field]: [expect.stringContaining('Arrays are not accepted')] });
    }
  });

  it('an unknown query parameter on a read is a 422 naming it, as an unknown body field is', async () => {
    const res = await get('/api/v1/sites?utm_source=x&other[]=1');
    expect(res.status).toBe(422);
    expect(res.body.fields).toEqual({ utm_source: ['This request does not take this field.'], 'other[]': ['This request does not take this field.'] });
  });
});

/** One request over a raw socket; resolves with the status and body once the server closes. */
function rawRequest(text: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => {
      data += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body: rest.join('\r\n\r\n') });
    });
  });
}

const expectCatalogueBody = (body: unknown, context: string) => {
  expect(body, context).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  expect(Object.keys(body as object), context).not.toContain('statusCode');
  expect(Object.keys(body as object), context).not.toContain('code');
};

describe('every error body has the catalogue’s shape', () => {
  it('odd header values through app.inject', async () => {
    const url = `/api/v1/articles/${a.articleId}`;
    const auth = { authorization: `Bearer ${a.customer.key}` };
    const cases: { method: 'GET' | 'PUT' | 'PATCH'; headers: Record<string, string>; payload?: string }[] = [
      { method: 'PUT', headers: { ...auth, 'content-type': '/' }, payload: '{"body":"x"}' },
      { method: 'PUT', headers: { ...auth, 'content-type': 'application/json; charset=klingon' }, payload: '{"body":"<p>x</p>"}' },
      { method: 'PUT', headers: { ...auth, 'content-type': 'application/json;;;=' }, payload: '{"body"' },
      { method: 'PUT', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'x' },
      { method: 'PUT', headers: { ...auth, 'content-type': 'multipart/form-data' }, payload: 'x' },
      { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, payload: '' },
      { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"__proto__":{"x":1}}' },
      { method: 'PATCH', headers: { ...auth, 'content-type': 'application/json', 'if-match': '\u00ff' }, payload: '{"title":"x"}' },
      { method: 'PATCH', headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'x'.repeat(300) }, payload: '{"title":"x"}' },
      { method: 'GET', headers: { authorization: 'Bearer \u00ff' } },
      { method: 'GET', headers: { authorization: 'Basic', 'x-api-key': '' } },
      { method: 'GET', headers: { ...auth, accept: 'text/html' } },
    ];
    for (const { method, headers, payload } of cases) {
      const res = await h.app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
      const context = `${method} ${JSON.stringify(headers).slice(0, 120)}`;
      if (res.statusCode < 400) continue;
      expect(res.statusCode, context).toBeLessThan(500);
      expectCatalogueBody(res.json(), context);
    }
  });

  it('malformed HTTP over a raw socket', async () => {
    const auth = `Authorization: Bearer ${a.customer.key}\r\n`;
    const put = `PUT /api/v1/articles/${a.articleId} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\n`;
    const cases = [
      `${put}Content-Length: abc\r\nConnection: close\r\n\r\n{}`,
      `${put}Content-Length: 1e3\r\nConnection: close\r\n\r\n{}`,
      `${put}Content-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{}`,
      `${put}Transfer-Encoding: chunked\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      `${put}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      `GET /api/v1/sites HTTP/1.1\r\nHost: x\r\n${auth}X-Odd: a\u0001b\r\nConnection: close\r\n\r\n`,
      `GET /api/v1/sites HTTP/1.1\r\nHost: x\r\nBad Header Line\r\nConnection: close\r\n\r\n`,
      `GET /api/v1/sites HTTP/9.9\r\nHost: x\r\nConnection: close\r\n\r\n`,
      `GET /api/v1/sites\u0000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      'NONSENSE\r\n\r\n',
    ];
    for (const text of cases) {
      const res = await rawRequest(text);
      const context = JSON.stringify(text.slice(0, 90));
      expect(res.status, context).toBeGreaterThanOrEqual(400);
      expect(res.status, context).toBeLessThan(500);
      expectCatalogueBody(JSON.parse(res.body), context);
    }
  });
});
