import type { Kysely } from 'kysely';
import { checkedDayRange } from '../core/periods.js';
import { dayRangeBounds } from '../core/time.js';
import type { BacklinkRow, Database } from '../db/schema.js';
import type { Actor } from './actor.js';
import { type Page, type PageRequest, paginate } from './pagination.js';
import type { SitesService } from './sites.js';

export type Backlink = Omit<BacklinkRow, 'site_id' | 'account_id'>;

export interface BacklinkFilters extends PageRequest {
  from?: string;
  to?: string;
}

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
  ) {}

  async list(actor: Actor, siteId: number, filters: BacklinkFilters): Promise<Page<Backlink>> {
    if (filters.from !== undefined && filters.to !== undefined) checkedDayRange(filters.from, filters.to);
    await this.sites.visible(actor, siteId);
    let query = this.db.selectFrom('backlinks').where('site_id', '=', siteId);
    if (filters.from !== undefined) query = query.where('acquired_at', '>=', `${filters.from}T00:00:00Z`);
    if (filters.to !== undefined) query = query.where('acquired_at', '<', dayRangeBounds(filters.to, filters.to).end);
    const ordered = query
      .select(columns)
      .orderBy('acquired_at', (ob) => ob.desc().nullsLast())
      .orderBy('id', 'desc');
    return paginate(ordered, query, filters, (row) => row);
  }
}
