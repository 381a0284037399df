import type { Kysely } from 'kysely';
import type { BacklinkRow, Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import type { CountersService } from './counters.js';
import { type DayFilters, type Page, type PageRequest, paginateByDay, withinDays } from './pagination.js';
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
  constructor(
    private readonly db: Kysely<Database>,
    private readonly sites: SitesService,
    private readonly counters: CountersService,
  ) {}

  async list(actor: Actor, siteId: number, filters: BacklinkFilters): Promise<Page<Backlink>> {
    await this.sites.visible(actor, siteId);
    const query = withinDays(this.db.selectFrom('backlinks').where('site_id', '=', siteId), 'acquired_at', filters);
    const days = await this.counters.days('backlink_day_counts', siteId, filters);
    return paginateByDay(query.select(columns), 'acquired_at', days, filters, (row) => row);
  }
}
