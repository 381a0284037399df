import type { AnchorageMigration } from './columns.js';

/** Articles per backfill round: bodies are read whole, so a round holds a bounded amount of text. */
const backfillBatch = 200;

export const articleDerived: AnchorageMigration = {
  name: '006_article_derived',
  async up({ db, protectedLinksOf }) {
    // What a read derives from the body, stored when the body is written (JSON of the protected
    // links, as GET returns them), so reading an article does not parse its HTML.
    await db.schema.alterTable('articles').addColumn('protected_links', 'text').execute();
    for (let after = 0; ; ) {
      const rows: { id: number; body: string }[] = await db
        .selectFrom('articles')
        .select(['id', 'body'])
        .where('id', '>', after)
        .orderBy('id')
        .limit(backfillBatch)
        .execute();
      if (rows.length === 0) break;
      for (const row of rows) {
        await db
          .updateTable('articles')
          .set({ protected_links: JSON.stringify(protectedLinksOf(row.body)) })
          .where('id', '=', row.id)
          .execute();
      }
      after = rows.at(-1)!.id;
    }
  },
};
