import { sql } from 'kysely';
import type { AnchorageMigration } from './columns.js';

/**
 * Code points of a URL the import keys' indexes hold: an entry stays under PostgreSQL's limit for
 * an index row (about 2.7 kB) whatever the URL's length; a lookup compares the whole URL after.
 */
const keyPrefixLength = 200;

/** The indexed expression of a URL column, written the same in the index and in every lookup. */
const keyPrefixSql = (column: string) => sql<string>`substr(${sql.ref(column)}, 1, ${sql.lit(keyPrefixLength)})`;

/**
 * An import matches a file's articles by (site, `url`) and its backlinks by (site, `source_url`,
 * `target_url`) with the stored ones (decisions.md, "Import"). Not unique: rows stored before may
 * share a key, and the import then takes the first.
 */
export const importKeys: AnchorageMigration = {
  name: '021_import_keys',
  async up({ db }) {
    await sql`create index articles_site_url on articles (site_id, ${keyPrefixSql('url')})`.execute(db);
    await sql`create index backlinks_site_source on backlinks (site_id, ${keyPrefixSql('source_url')})`.execute(db);
  },
};
