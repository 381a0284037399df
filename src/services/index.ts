import type { Redis } from 'ioredis';
import type { Clock } from '../core/time.js';
import type { Db } from '../db/connect.js';
import { ActivityLog } from './activity.js';
import { ArticlesService } from './articles.js';
import { BacklinksService } from './backlinks.js';
import { DemoService } from './demo.js';
import { ImportService } from './import.js';
import { KeysService } from './keys.js';
import { RequestLimiter } from './limits.js';
import { SitesService } from './sites.js';
import { StatsService } from './stats.js';
import { UsersService } from './users.js';

export interface ServiceDeps {
  db: Db;
  clock: Clock;
  redis?: Redis;
  onBackgroundError: (error: unknown) => void;
}

/** Every use case of the service, wired once per process and shared by REST, MCP, UI and CLI. */
export function createServices(deps: ServiceDeps) {
  const { db, clock } = deps;
  const kysely = db.kysely;
  const sites = new SitesService(kysely);
  const users = new UsersService(kysely, clock);
  const keys = new KeysService(kysely, clock);
  const importer = new ImportService(kysely, clock);
  return {
    db,
    clock,
    sites,
    articles: new ArticlesService(kysely, sites),
    backlinks: new BacklinksService(kysely, sites),
    stats: new StatsService(kysely, sites, clock),
    users,
    keys,
    importer,
    demo: new DemoService(kysely, clock, users, keys, importer),
    activity: new ActivityLog(kysely, clock, deps.onBackgroundError),
    requestLimiter: new RequestLimiter(deps.redis),
  };
}

export type Services = ReturnType<typeof createServices>;
