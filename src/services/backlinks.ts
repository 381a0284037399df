import type { Kysely } from 'kysely';
import type { BacklinkCategory, BacklinkStatus } from '../core/values.js';
import type { BacklinkRow, Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { CountersService } from './counters.js';
import { type DayFilters, type Page, type PageRequest, checkedDayFilters, paginate, paginateByDay, SHORT_SKIP, TopPages } from './pagination.js';
import type { SitesService } from './sites.js';

export type Backlink = Omit<BacklinkRow, 'site_id' | 'account_id'>;

export type BacklinkFilters = PageRequest & DayFilters & { status?: BacklinkStatus; category?: BacklinkCategory };

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
    const { category, status } = filters;
    if (status !== undefined) return this.listByStatus(siteId, bounds, status, category, filters);
    // The day counters count by category: a page seeks by them with or without one.
    const counts = this.counters.list('backlinks', siteId, bounds, category);
    const build = () => {
      const query = this.db.selectFrom('backlinks').select(columns).where('site_id', '=', siteId);
      return category === undefined ? query : query.where('category', '=', category);
    };
    const parameters = category === undefined ? [siteId] : [siteId, category];
    const list = { build, shape: `site category:${category !== undefined}`, parameters, top: this.topPages };
    return paginateByDay(list, 'acquired_at', bounds, counts, filters, (row) => row, this.shortSkip);
  }

  /**
   * Backlinks of one status (the lost ones, say), in the list's order. No counter counts by
   * status: the page is read by offset and its total counted, so a deep page costs more here than
   * in the lists that seek by the day counters.
   */
  private listByStatus(siteId: number, bounds: DayFilters, status: BacklinkStatus, category: BacklinkCategory | undefined, page: PageRequest): Promise<Page<Backlink>> {
    let filtered = this.db.selectFrom('backlinks').where('site_id', '=', siteId).where('status', '=', status);
    if (category !== undefined) filtered = filtered.where('category', '=', category);
    if (bounds.from !== undefined) filtered = filtered.where('acquired_at', '>=', `${bounds.from}T00:00:00Z`);
    if (bounds.to !== undefined) filtered = filtered.where('acquired_at', '<=', `${bounds.to}T23:59:59Z`);
    const ordered = filtered
      .select(columns)
      .orderBy('acquired_at', (ob) => ob.desc().nullsLast())
      .orderBy('id', 'desc');
    return paginate(ordered, filtered, page, (row) => row);
  }
}
