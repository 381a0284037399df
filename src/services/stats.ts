import type { Kysely } from 'kysely';
import { type PeriodRequest, resolvePeriod } from '../core/periods.js';
import type { Clock } from '../core/time.js';
import { dayRangeBounds } from '../core/time.js';
import type { BacklinkCategory } from '../core/values.js';
import type { Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { SitesService } from './sites.js';

export interface Stats {
  site_id: number;
  from: string;
  to: string;
  articles_published: number;
  backlinks_acquired: number;
  backlinks_industry: number;
  backlinks_local: number;
}

export class StatsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly sites: SitesService,
    private readonly clock: Clock,
  ) {}

  async get(actor: Actor, siteId: number, request: PeriodRequest): Promise<Stats> {
    const range = resolvePeriod(request, this.clock.now());
    await this.sites.visible(actor, siteId);
    return this.forRange(siteId, range.from, range.to);
  }

  /** Counts for inclusive days `from`..`to`; the UI's monthly series uses it too. */
  async forRange(siteId: number, from: string, to: string): Promise<Stats> {
    const { start, end } = dayRangeBounds(from, to);
    // One count per category: each is a range scan of the (site_id, category, acquired_at) index.
    const backlinksIn = (category: BacklinkCategory) =>
      this.db
        .selectFrom('backlinks')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('site_id', '=', siteId)
        .where('category', '=', category)
        .where('acquired_at', '>=', start)
        .where('acquired_at', '<', end)
        .executeTakeFirstOrThrow()
        .then((row) => Number(row.n));
    const [articles, industry, local] = await Promise.all([
      this.db
        .selectFrom('articles')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('site_id', '=', siteId)
        .where('status', '=', 'published')
        .where('published_at', '>=', start)
        .where('published_at', '<', end)
        .executeTakeFirstOrThrow(),
      backlinksIn('industry'),
      backlinksIn('local'),
    ]);
    return {
      site_id: siteId,
      from,
      to,
      articles_published: Number(articles.n),
      backlinks_acquired: industry + local,
      backlinks_industry: industry,
      backlinks_local: local,
    };
  }
}
