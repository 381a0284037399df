import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../src/core/errors.js';
import { useHarness } from '../helpers/harness.js';

/** A GET with the path exactly as written (fetch would normalise dot segments first). */
function rawGet(port: number, path: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type'] ?? ''), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const traversal = ['%2e%2e/%2e%2e/package.json', '..%2f..%2fpackage.json', '..%5c..%5cpackage.json', '%2e%2e%5c%2e%2e%5cpackage.json', '%252e%252e/%252e%252e/package.json', '.%2e/.%2e/package.json', 'x%00.css', '%00', '%c0%ae%c0%ae/package.json', '%', '%zz', '..%255c..%255cpackage.json', '%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd'];
const prefixes = ['/assets/', '/app/assets/', '/assets/vendor/', '/media/', '/docs/', '/docs/static/', '/app/'];

describe('encoded traversal under static paths', () => {
  const h = useHarness({ listen: true });
  let port: number;

  beforeAll(async () => {
    port = Number(new URL(h.settings.publicUrl).port);
  });

  it('answers 400 or 404 in the catalogue shape (or the UI’s error page), never 5xx or a file', async () => {
    for (const prefix of prefixes) {
      for (const tail of traversal) {
        const path = `${prefix}${tail}`;
        const response = await rawGet(port, path);
        expect([400, 404], `${path} → ${response.status}`).toContain(response.status);
        expect(response.body).not.toContain('"devDependencies"');
        expect(response.body).not.toContain('root:x:0:0');
        if (response.type.startsWith('application/json')) {
          const body = JSON.parse(response.body) as { error: string; message: string };
          expect(Object.keys(errorCatalogue), path).toContain(body.error);
          expect(typeof body.message).toBe('string');
        } else {
          expect(response.type, path).toMatch(/^text\/html/);
        }
      }
    }
  });
});
