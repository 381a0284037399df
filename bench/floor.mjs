// The bare floor (issue 10, item 2): a plain node:http server doing what listArticles page 2 and
// getArticle must do at the least, on the same database as the service: the key lookup (SHA-256
// of the key → api_keys row), the ownership check, the query, and the same JSON. No framework,
// no query builder, no limits, no activity log. Started by bench/reads.mjs with SQLITE_FILE or
// DATABASE_URL; reports its port over IPC.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

const dist = process.env.ANCHORAGE_DIST ?? new URL('../dist', import.meta.url).pathname;
const { protectedLinksOf } = await import(`${dist}/core/protected-anchors.js`);
const { loadSettings } = await import(`${dist}/config.js`);

const listColumns = 'id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image_url';
const sql = {
  key: 'select api_keys.account_id from api_keys join users on users.id = api_keys.user_id where api_keys.key_hash = ? and api_keys.revoked_at is null',
  site: 'select id from sites where id = ? and account_id = ?',
  total: 'select coalesce(sum(n), 0) as n from article_month_counts where site_id = ?',
  page: `select ${listColumns} from articles where site_id = ? order by published_at desc nulls last, id desc limit ? offset ?`,
  article: 'select * from articles where id = ? and account_id = ?',
};

/**
 * `query(name, params)` → rows, on SQLite (prepared once) or PostgreSQL (a pool like the service's,
 * of its size: `DATABASE_POOL_SIZE`).
 */
async function database() {
  if (process.env.DATABASE_URL) {
    const { default: pg } = await import('pg');
    pg.types.setTypeParser(pg.types.builtins.INT8, Number);
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: loadSettings(process.env).databasePoolSize });
    const text = Object.fromEntries(
      Object.entries(sql).map(([name, q]) => {
        let i = 0;
        return [name, q.replace(/\?/g, () => `$${++i}`)];
      }),
    );
    return async (name, params) => (await pool.query({ name, text: text[name], values: params })).rows;
  }
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(process.env.SQLITE_FILE, { readonly: true });
  const statements = Object.fromEntries(Object.entries(sql).map(([name, q]) => [name, db.prepare(q)]));
  return async (name, params) => statements[name].all(...params);
}

const query = await database();

function send(response, status, body, headers = {}) {
  const json = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), ...headers });
  response.end(json);
}

async function handle(request, response) {
  const url = new URL(request.url, 'http://floor');
  const key = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
  const [owner] = key ? await query('key', [createHash('sha256').update(key).digest('hex')]) : [];
  if (!owner) return send(response, 401, { error: 'unauthenticated' });
  let match = /^\/api\/v1\/sites\/(\d+)\/articles$/.exec(url.pathname);
  if (match) {
    const siteId = Number(match[1]);
    const page = Number(url.searchParams.get('page') ?? 1);
    const perPage = Number(url.searchParams.get('per_page') ?? 25);
    const [site] = await query('site', [siteId, owner.account_id]);
    if (!site) return send(response, 404, { error: 'not_found' });
    const [[{ n }], data] = await Promise.all([query('total', [siteId]), query('page', [siteId, perPage, (page - 1) * perPage])]);
    const total = Number(n);
    return send(response, 200, { data, meta: { page, per_page: perPage, total, last_page: Math.max(1, Math.ceil(total / perPage)) } });
  }
  match = /^\/api\/v1\/articles\/(\d+)$/.exec(url.pathname);
  if (match) {
    const [row] = await query('article', [Number(match[1]), owner.account_id]);
    if (!row) return send(response, 404, { error: 'not_found' });
    const links = typeof row.protected_links === 'string' ? JSON.parse(row.protected_links) : protectedLinksOf(row.body);
    const data = {
      id: row.id,
      site_id: row.site_id,
      title: row.title,
      url: row.url,
      status: row.status,
      published_at: row.published_at,
      target_keyword: row.target_keyword,
      word_count: row.word_count,
      featured_image_url: row.featured_image_url,
      meta_description: row.meta_description,
      body: row.body,
      protected_links: links,
    };
    return send(response, 200, { data }, { etag: `"a${row.id}-v${row.version}"` });
  }
  send(response, 404, { error: 'not_found' });
}

const server = createServer((request, response) => {
  handle(request, response).catch((error) => send(response, 500, { error: 'internal_error', message: String(error) }));
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (message) => {
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send({ cpuMicros: user + system });
  }
  if (message === 'stop') process.exit(0);
});
