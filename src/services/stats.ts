import { type PeriodRequest, resolvePeriod } from '../core/periods.js';
import type { Clock } from '../core/time.js';
import type { Actor } from './actor.js';
import type { CountersService } from './counters.js';
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
    private readonly sites: SitesService,
    private readonly counters: CountersService,
    private readonly clock: Clock,
  ) {}

  async get(actor: Actor, siteId: number, request: PeriodRequest): Promise<Stats> {
    const range = resolvePeriod(request, this.clock.now());
    await this.sites.visible(actor, siteId);
    return this.forRange(siteId, range.from, range.to);
  }

  /** Counts for inclusive days `from`..`to`, summed over the day counters; the UI's monthly series uses it too. */
  async forRange(siteId: number, from: string, to: string): Promise<Stats> {
    const [articles, backlinks] = await Promise.all([
      this.counters.byKey('articles', siteId, from, to),
      this.counters.byKey('backlinks', siteId, from, to),
    ]);
    const industry = backlinks.get('industry') ?? 0;
    const local = backlinks.get('local') ?? 0;
    return {
      site_id: siteId,
      from,
      to,
      articles_published: articles.get('published') ?? 0,
      backlinks_acquired: industry + local,
      backlinks_industry: industry,
      backlinks_local: local,
    };
  }
}
