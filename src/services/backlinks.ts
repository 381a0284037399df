import type { Kysely } from 'kysely';
import type { BacklinkRow, Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { CountersService } from './counters.js';
import { type DayFilters, type Page, type PageRequest, checkedDayFilters, paginateByDay, SHORT_SKIP, TopPages } from './pagination.js';
import type { SitesService } from './sites.js';

export type Backlink = Omit<BacklinkRow, 'site_id' | 'account_id'>;

export type BacklinkFilters = PageRequest & DayFilters;

const columns = [
  'id',
  'acquired_at',
  'source_domain',
  'source_url',
  'target_url',
  'anchor_text',
  'anchor_type',
  'status',
  'category',
] as const;

export class BacklinksService {
  private readonly topPages: TopPages;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sites: SitesService,
    private readonly counters: CountersService,
    /** Rows a page skips by index before it seeks by the day counters (tests lower it to exercise the seek). */
    private readonly shortSkip = SHORT_SKIP,
  ) {
    this.topPages = new TopPages(db);
  }

  async list(actor: Actor, siteId: number, filters: BacklinkFilters): Promise<Page<Backlink>> {
    await this.sites.visible(actor, siteId);
    const bounds = checkedDayFilters(filters);
    const counts = this.counters.list('backlinks', siteId, bounds);
    const build = () => this.db.selectFrom('backlinks').select(columns).where('site_id', '=', siteId);
    const list = { build, shape: 'site', parameters: [siteId], top: this.topPages };
    return paginateByDay(list, 'acquired_at', bounds, counts, filters, (row) => row, this.shortSkip);
  }
}
