import { connect, type Socket } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { seedSite } from '../helpers/fixtures.js';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { expectSound, issueMcpToken } from './hostile.js';

/**
 * What the fuzz suite found, pinned as examples: each answered 500 or a framework body before
 * its fix, and each must keep answering a 4xx of the catalogue whatever seed the fuzzer draws.
 */
describe('inputs the fuzz suite found, pinned', () => {
  const harness = useHarness({ listen: true });
  let port: number;

  beforeAll(async () => {
    port = Number(new URL(harness.settings.publicUrl).port);
  });

  const inject = async (method: string, url: string, headers: Record<string, string> = {}, payload?: string) => {
    const sent = { method, url, headers, payload };
    const response = await harness.app.inject({ method: method as 'GET', url, headers, payload });
    expectSound(sent, response);
    return response;
  };

  it('static files: encoded traversal and a failed precondition are 404 and 412, not 500', async () => {
    for (const url of ['/docs/static/..%5c', '/assets/..%5c..%5cpackage.json', '/assets/vendor/chart.umd.min.js%00']) {
      const response = await inject('GET', url);
      expect(response.statusCode, url).toBe(404);
      // The UI's assets answer with the UI's error page; the API docs with the Error body.
      if (url.startsWith('/docs')) expect(response.json()).toMatchObject({ error: 'not_found' });
    }
    const conditional = await inject('GET', '/docs/static/index.html/%2e%2e', { 'if-match': 'W/"1"' });
    expect(conditional.statusCode).toBe(412);
    expect(conditional.json()).toMatchObject({ error: 'precondition_failed' });
  });

  it('an OAuth client_id holding U+0000 is an unknown client, not a 500 (PostgreSQL text cannot hold it)', async () => {
    for (const url of ['/oauth/authorize?client_id=%00', '/app/sign-in?next=%2Foauth%2Fauthorize%3Fclient_id%3D%2500']) {
      const response = await inject('GET', url);
      expect(response.statusCode, url).toBeLessThan(500);
    }
    const token = await inject('POST', '/oauth/token', { 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=authorization_code&code=x&client_id=%00&code_verifier=x&redirect_uri=x');
    expect(token.statusCode).toBeLessThan(500);
  });

  it('an undecodable URL or an over-long path parameter is a 404 of the catalogue, not the framework body', async () => {
    const { key } = await createCustomer(harness.services);
    for (const url of ['/api/v1/articles/%zz', '/api/v1/sites/%/backlinks', `/api/v1/articles/${'9'.repeat(500)}`]) {
      const response = await inject('GET', url, { authorization: `Bearer ${key}` });
      expect(response.statusCode, url).toBe(404);
      expect(response.json()).toEqual({ error: 'not_found', message: 'Nothing is served at this path.' });
    }
  });

  it('a JSON write body with a field the operation does not take is a 422 naming it, and saves nothing', async () => {
    const customer = await createCustomer(harness.services);
    const { articleIds } = await seedSite(harness.services, customer.email, { articles: [{ status: 'draft', title: 'Kept', body: '<p>Kept.</p>' }] });
    const url = `/api/v1/articles/${articleIds[0]}`;
    const headers = { authorization: `Bearer ${customer.key}`, 'content-type': 'application/json' };
    for (const [method, payload] of [
      ['PUT', { body: '<p>New.</p>', word_count: 9999 }],
      ['PATCH', { title: 'New', body: '<p>New.</p>' }],
    ] as const) {
      const response = await inject(method, url, headers, JSON.stringify(payload));
      expect(response.statusCode, method).toBe(422);
      expect(response.json().fields[method === 'PUT' ? 'word_count' : 'body'], method).toEqual(['This request does not take this field.']);
    }
    const after = await inject('GET', url, { authorization: `Bearer ${customer.key}` });
    expect(after.json().data).toMatchObject({ title: 'Kept', body: '<p>Kept.</p>' });
  });

  it('a field or argument named like an Object method (toString, __proto__) is a 422 naming it over REST and MCP, and an ignored query parameter', async () => {
    const customer = await createCustomer(harness.services);
    const { siteId, articleIds } = await seedSite(harness.services, customer.email, { articles: [{ status: 'draft', title: 'Kept', body: '<p>Kept.</p>' }] });
    const names = ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf'];
    const bearer = { authorization: `Bearer ${customer.key}` };
    for (const name of names) {
      const patch = await inject('PATCH', `/api/v1/articles/${articleIds[0]}`, { ...bearer, 'content-type': 'application/json' }, `{"title":"New","${name}":1}`);
      if (name === '__proto__') {
        // Fastify's JSON parser refuses a body that could poison a prototype (the MCP endpoint's too).
        expect(patch.statusCode, name).toBe(400);
        expect(patch.json().error, name).toBe('invalid_json');
      } else {
        expect(patch.statusCode, name).toBe(422);
        expect(patch.json().fields, name).toEqual(JSON.parse(`{"${name}":["This request does not take this field."]}`));
      }
      // A query parameter a list does not take is refused by its name, whatever the name.
      const list = await inject('GET', `/api/v1/sites/${siteId}/articles?${name}=1`, bearer);
      expect(list.statusCode, name).toBe(422);
      expect(list.json().fields, name).toEqual(JSON.parse(`{"${name}":["This request does not take this field."]}`));
    }
    const after = await inject('GET', `/api/v1/articles/${articleIds[0]}`, bearer);
    expect(after.json().data).toMatchObject({ title: 'Kept' });

    const token = await issueMcpToken(harness, customer.userId);
    const mcpHeaders = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    for (const name of names) {
      const payload = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_sites","arguments":{"${name}":1}}}`;
      const response = await inject('POST', '/mcp', mcpHeaders, payload);
      if (name === '__proto__') {
        expect(response.statusCode, name).toBe(400);
        expect(response.json().error, name).toBe('invalid_json');
        continue;
      }
      expect(response.statusCode, name).toBe(200);
      const result = response.json().result;
      expect(result.isError, name).toBe(true);
      const body = JSON.parse(result.content[0].text);
      expect(body.error, name).toBe('validation_failed');
      expect(body.fields, name).toEqual(JSON.parse(`{"${name}":["This tool does not take this argument."]}`));
    }
  });

  it('sign-in and sign-out without a form body (or with JSON null) are refused, not 500', async () => {
    for (const [url, headers, payload] of [
      ['/app/sign-out', {}, undefined],
      ['/app/sign-in', {}, undefined],
      ['/app/sign-in', { 'content-type': 'application/json' }, 'null'],
      ['/app/sign-in', { 'content-type': 'application/json' }, '{"_csrf":"x","email":{"toString":1}}'],
    ] as const) {
      const response = await inject('POST', url, headers, payload);
      expect(response.statusCode, `${url} ${payload}`).toBe(403);
    }
  });

  it('an MCP OPTIONS request without preflight headers is not a plain-text 400', async () => {
    const response = await inject('OPTIONS', '/mcp');
    expect(response.statusCode).toBeLessThan(400);
  });

  it('a JSON-RPC message nested 9,000 levels deep is 400 invalid_json, not 500; 10,000 levels hold more than 10,000 values: 413', async () => {
    const token = await issueMcpToken(harness, (await createCustomer(harness.services)).userId);
    const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
    const post = (payload: string) =>
      inject('POST', '/mcp', { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, payload);
    const deep = await post(nested(9_000));
    expect(deep.statusCode).toBe(400);
    expect(deep.json()).toMatchObject({ error: 'invalid_json' });
    const deeper = await post(nested(10_000));
    expect(deeper.statusCode).toBe(413);
    expect(deeper.json()).toMatchObject({ error: 'payload_too_large' });
  });

  /** What the server sends on a raw connection until it closes; `send` writes the request's bytes. */
  const rawAnswer = (send: (socket: Socket) => void) =>
    new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      const socket = connect(port, '127.0.0.1');
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
      send(socket);
    });

  it('bytes Node cannot parse as HTTP get an Error body of the catalogue, not the framework one', async () => {
    const answer = await rawAnswer((socket) => socket.end('GET /api/v1/sites HTTP/1.1\r\nHost: x\r\nBad Name: x\r\n\r\n'));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toEqual({ error: 'invalid_json', message: 'The request is not valid HTTP/1.1.' });
  });

  it('a body Node cannot parse after the request was answered gets no second answer on the socket', async () => {
    const answer = await rawAnswer((socket) => {
      socket.write('GET /nothing-here HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
      setTimeout(() => socket.end('zz\r\n{}\r\n'), 200);
    });
    expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toEqual(['HTTP/1.1 404 ']);
  });

  it('a body Node cannot parse while its route still waits for it gets one answer, the Error body of the catalogue', async () => {
    const { key } = await createCustomer(harness.services);
    const answer = await rawAnswer((socket) => {
      socket.write(`PUT /api/v1/articles/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
      setTimeout(() => socket.end('zz\r\n{}\r\n'), 200);
    });
    expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toEqual(['HTTP/1.1 400 ']);
    expect(JSON.parse(answer.split('\r\n\r\n')[1]!)).toEqual({ error: 'invalid_json', message: 'The request is not valid HTTP/1.1.' });
  });
});
