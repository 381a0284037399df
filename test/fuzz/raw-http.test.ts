import { connect } from 'node:net';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, useHarness } from '../helpers/harness.js';
import { catalogueCodes, check, fuzzParameters, fuzzTimeoutMs, hangMs, reportFindings, surfaceOf } from './hostile.js';

/**
 * What `app.inject` cannot send: bytes on a real socket. Invalid header bytes, raw UTF-8 in the
 * request target and header values, conflicting Content-Length and Transfer-Encoding, bad
 * chunks, bodies shorter or longer than announced. The answer is never a 5xx and never a hang
 * (the connection is half-closed after the request, so a server waiting for more bytes must
 * still answer or close), and the API and MCP answer errors in the catalogue's shape.
 */

interface RawAnswer {
  status: number | undefined;
  head: string;
  body: string;
}

/**
 * Writes the bytes, half-closes, and reads until the server closes (a hang fails). The answer is
 * the first one: bytes past the first request are a second request, answered after it (a HEAD's
 * answer has no body; a body with Content-Length ends there).
 */
function exchange(port: number, bytes: Buffer, bodiless: boolean): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`hang: no answer within ${hangMs} ms to ${JSON.stringify(bytes.subarray(0, 400).toString('latin1'))}`));
    }, hangMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const headEnd = text.indexOf('\r\n\r\n');
      const head = headEnd === -1 ? text : text.slice(0, headEnd);
      const rest = headEnd === -1 ? '' : text.slice(headEnd + 4);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
      const body = bodiless ? '' : length === undefined ? rest : rest.slice(0, Number(length));
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
      resolve({ status: status === undefined ? undefined : Number(status), head, body });
    });
    socket.end(bytes);
  });
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');

/** Header values as raw bytes: controls, DEL, obs-text, UTF-8 of non-BMP characters, lone-surrogate bytes. */
const rawValue: fc.Arbitrary<Buffer> = fc.oneof(
  fc.constantFrom(
    utf8('😀'), utf8('\u2028'), utf8('é'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xc0, 0xae]), Buffer.from([0xff, 0xfe]),
    Buffer.from([0x00]), Buffer.from([0x7f]), Buffer.from([0x0d]), Buffer.from([0x0a, 0x20]), Buffer.from([0x09]), Buffer.from([0x0b]),
    utf8('Bearer ak_'), utf8('a'.repeat(20_000)), utf8(''), utf8('"'), utf8('1e3'), utf8('-1'), utf8('9'.repeat(30)),
  ),
  fc.uint8Array({ maxLength: 12 }).map((bytes) => Buffer.from(bytes)),
);

const headerNames = [
  'Authorization', 'X-API-Key', 'Cookie', 'Content-Type', 'If-Match', 'Idempotency-Key', 'Accept', 'Origin', 'Host', 'X-Forwarded-For',
  'Mcp-Protocol-Version', 'User-Agent', 'Range', 'Bad Name', 'Bad:Name', '', 'X-\u00e9',
];

const framings = [
  'none', 'cl-short', 'cl-long', 'cl-double', 'cl-negative', 'cl-junk', 'te-chunked', 'te-bad-chunk', 'te-and-cl', 'te-unknown', 'chunked-huge',
] as const;

describe('fuzz: raw bytes on a real socket', () => {
  const harness = useHarness({ listen: true, env: { TRUST_PROXY: 'true' } });
  let port: number;
  let key: string;

  beforeAll(async () => {
    port = Number(new URL(harness.settings.publicUrl).port);
    key = (await createCustomer(harness.services)).key;
  });

  it('answers malformed requests without a 5xx or a hang', async () => {
    const request = fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'GE T', 'get', 'PRI', 'CONNECT'),
      path: fc.constantFrom(
        '/api/v1/sites', '/api/v1/articles/1', '/api/v1/sites/1/articles?page=1e3', '/mcp', '/oauth/token', '/oauth/register', '/app/sign-in',
        '/app', '/assets/app.css', '/docs/static/index.html', '/media/x', '/healthz', '*', 'http://evil.example/api/v1/sites', '',
      ),
      rawPath: fc.option(rawValue, { nil: undefined }),
      version: fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 ', 'HTTP/9'),
      headers: fc.array(fc.tuple(fc.constantFrom(...headerNames), rawValue), { maxLength: 5 }),
      auth: fc.boolean(),
      framing: fc.constantFrom(...framings),
      body: fc.oneof(fc.constantFrom('{"title":"x"}', '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', 'grant_type=x', '[', ''), fc.string({ maxLength: 40 })),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ method, path, rawPath, version, headers, auth, framing, body }) => {
        const lines: Buffer[] = [Buffer.concat([utf8(`${method} ${path}`), rawPath ?? Buffer.alloc(0), utf8(` ${version}\r\n`)])];
        lines.push(utf8(`Host: 127.0.0.1:${port}\r\nConnection: close\r\nContent-Type: application/json\r\n`));
        if (auth) lines.push(utf8(`Authorization: Bearer ${key}\r\n`));
        for (const [name, value] of headers) lines.push(Buffer.concat([utf8(`${name}: `), value, utf8('\r\n')]));
        const payload = utf8(body);
        const framingHeaders: Record<(typeof framings)[number], string> = {
          none: '',
          'cl-short': `Content-Length: ${payload.length + 5}\r\n`,
          'cl-long': `Content-Length: ${Math.max(0, payload.length - 3)}\r\n`,
          'cl-double': `Content-Length: ${payload.length}\r\nContent-Length: ${payload.length + 1}\r\n`,
          'cl-negative': 'Content-Length: -1\r\n',
          'cl-junk': 'Content-Length: 1e3\r\n',
          'te-chunked': 'Transfer-Encoding: chunked\r\n',
          'te-bad-chunk': 'Transfer-Encoding: chunked\r\n',
          'te-and-cl': `Transfer-Encoding: chunked\r\nContent-Length: ${payload.length}\r\n`,
          'te-unknown': 'Transfer-Encoding: gzip, chunked, x\r\n',
          'chunked-huge': 'Transfer-Encoding: chunked\r\n',
        };
        lines.push(utf8(`${framingHeaders[framing]}\r\n`));
        if (framing === 'te-chunked' || framing === 'te-and-cl') lines.push(utf8(`${payload.length.toString(16)}\r\n`), payload, utf8('\r\n0\r\n\r\n'));
        else if (framing === 'te-bad-chunk') lines.push(utf8('zz\r\n'), payload, utf8('\r\n'));
        else if (framing === 'chunked-huge') lines.push(utf8('ffffffffffffffff\r\n'), payload);
        else lines.push(payload);
        const bytes = Buffer.concat(lines);
        const answer = await exchange(port, bytes, method === 'HEAD');
        const context = `${answer.head.slice(0, 300)}\n${answer.body.slice(0, 300)}\nfor ${JSON.stringify(bytes.subarray(0, 600).toString('latin1'))}`;
        check(`${method} ${path} ${framing} ${answer.status}`, () => {
          if (answer.status === undefined) return;
          expect(answer.status, context).toBeLessThan(500);
          const surface = surfaceOf(path);
          const json = /content-type: application\/json/i.test(answer.head) && !/transfer-encoding: chunked/i.test(answer.head);
          if (answer.status >= 400 && json && (surface === 'api' || surface === 'mcp') && answer.body !== '') {
            const parsed = JSON.parse(answer.body) as Record<string, unknown>;
            expect(parsed, context).not.toHaveProperty('statusCode');
            if (parsed.jsonrpc !== '2.0') expect(catalogueCodes, context).toContain(parsed.error);
          }
        });
      }),
      fuzzParameters(200),
    );
    reportFindings();
  }, fuzzTimeoutMs);
});
