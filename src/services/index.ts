import type { Redis } from 'ioredis';
import type { HousekeepingSettings, HtmlPoolSettings } from '../config.js';
import type { Clock } from '../core/time.js';
import { BodyStore } from '../db/body-store.js';
import type { LoopTurns } from '../platform/loop-turns.js';
import type { Db } from '../db/connect.js';
import { AccountDeletionService } from './account-deletion.js';
import { ActivityLog } from './activity.js';
import { ActivitySpill } from './activity-spill.js';
import { ArticleWritesService } from './article-writes.js';
import { ArticlesService } from './articles.js';
import { BacklinksService } from './backlinks.js';
import { CountersService } from './counters.js';
import { DemoService } from './demo.js';
import { EditAllowance } from './edit-allowance.js';
import { FeaturedImagesService } from './featured-images.js';
import { Housekeeping } from './housekeeping.js';
import { HtmlPool } from './html-pool.js';
import { ExportService } from './export.js';
import { IdempotencyStore } from './idempotency.js';
import { ImportService } from './import.js';
import { type ImportChildSettings, ImportUploadsService } from './import-uploads.js';
import { KeysService } from './keys.js';
import { DatabaseMediaStore, FileMediaStore, type MediaStore } from './media.js';
import { Mailer, type MailSettings } from './mailer.js';
import { fetchClientMetadataDocument, OAuthService } from './oauth/index.js';
import { OnboardingService } from './onboarding.js';
import { ReportSubscriptionsService } from './report-mail.js';
import { ReportSharesService } from './report-shares.js';
import { RevisionsService } from './revisions.js';
import { registrationsPerHour, RequestLimiter, SignInThrottle, WindowLimiter } from './limits.js';
import type { AbuseLimits } from '../config.js';
import { SearchService } from './search.js';
import { SessionsService } from './sessions.js';
import { SiteReplaceService } from './site-replace.js';
import { SitesService } from './sites.js';
import { StatsService } from './stats.js';
import { UiQueries } from './ui-queries.js';
import { UsersService } from './users.js';

export interface ServiceDeps {
  db: Db;
  /** The turns of the process's event loop, shared by every listener and every write that stores. */
  loopTurns: LoopTurns;
  media: { store: 'fs' | 'db'; dir: string };
  /** Where activity records the database refused wait for it (`ActivitySpill`). */
  activitySpillDir: string;
  publicUrl: string;
  maxImageBytes: number;
  clock: Clock;
  redis?: Redis;
  abuse: AbuseLimits;
  htmlPool: HtmlPoolSettings;
  housekeeping: HousekeepingSettings;
  onBackgroundError: (error: unknown) => void;
  /** The child processes that check and apply staff's UI imports. */
  importChildren: ImportChildSettings;
  /** E-mail (SMTP_URL): password links go out through it; without it they are only shown. */
  mail?: MailSettings;
}

/** Every use case of the service, wired once per process and shared by REST, MCP, UI and CLI. */
export function createServices(deps: ServiceDeps) {
  const { db, clock } = deps;
  const kysely = db.kysely;
  const sites = new SitesService(kysely, db.watchChanges('sites'));
  const counters = new CountersService(kysely, db.dialect);
  const users = new UsersService(kysely, clock);
  const keys = new KeysService(kysely, db.dialect, clock, db.watchChanges('keys'), deps.abuse.maxActiveKeys);
  const importer = new ImportService(kysely, clock, db.dialect, db.writeTurns);
  const activity = new ActivityLog(kysely, deps.onBackgroundError, new ActivitySpill(deps.activitySpillDir));
  const bodies = new BodyStore(db);
  const revisions = new RevisionsService(kysely, clock, bodies);
  const editAllowance = new EditAllowance(kysely);
  const media: MediaStore =
    deps.media.store === 'db' ? new DatabaseMediaStore(kysely, clock) : new FileMediaStore(deps.media.dir);
  const htmlPool = new HtmlPool(deps.htmlPool);
  const articles = new ArticlesService(kysely, sites, counters, bodies, db.watchArticleChanges());
  const idempotency = new IdempotencyStore(kysely, clock);
  const search = new SearchService(kysely, db.dialect, sites, htmlPool, bodies);
  const articleWrites = new ArticleWritesService(
    kysely,
    bodies,
    clock,
    deps.loopTurns,
    htmlPool,
    revisions,
    activity,
    editAllowance,
    idempotency,
    (articleId) => articles.changed(articleId),
  );
  const mailer = deps.mail ? new Mailer(deps.mail) : undefined;
  const oauth = new OAuthService(kysely, clock, fetchClientMetadataDocument, db.watchChanges('tokens'));
  const forgetKept = () => {
    keys.forget();
    sites.forget();
    articles.changed();
    oauth.forgetKeptTokens();
  };
  return {
    db,
    clock,
    loopTurns: deps.loopTurns,
    mailer,
    sites,
    search,
    siteReplace: new SiteReplaceService(kysely, sites, search, articleWrites, idempotency),
    articles,
    backlinks: new BacklinksService(kysely, sites, counters),
    stats: new StatsService(sites, counters, clock),
    counters,
    users,
    keys,
    importer,
    importUploads: new ImportUploadsService(kysely, db.dialect, clock, activity, deps.importChildren, deps.onBackgroundError),
    exporter: new ExportService(kysely, activity),
    demo: new DemoService(kysely, clock, users, keys, importer, deps.publicUrl),
    activity,
    revisions,
    media,
    editAllowance,
    htmlPool,
    articleWrites,
    featuredImages: new FeaturedImagesService(articleWrites, media, deps.publicUrl, deps.maxImageBytes),
    requestLimiter: new RequestLimiter(deps.redis),
    registrationLimiter: new WindowLimiter({ points: registrationsPerHour, duration: 3600, keyPrefix: 'anchorage:dcr' }, deps.redis),
    sessions: new SessionsService(kysely, clock),
    signInThrottle: new SignInThrottle({ perEmail: deps.abuse.signInFailuresPerEmail, perAddress: deps.abuse.signInFailuresPerAddress }, deps.redis),
    unauthenticatedLimiter: new WindowLimiter(
      { points: deps.abuse.unauthenticatedPerMinute, duration: 60, keyPrefix: 'anchorage:unauthenticated' },
      deps.redis,
    ),
    authorizeLimiter: new WindowLimiter({ points: deps.abuse.authorizePerMinute, duration: 60, keyPrefix: 'anchorage:authorize' }, deps.redis),
    uiQueries: new UiQueries(kysely),
    oauth,
    housekeeping: new Housekeeping(db, clock, deps.housekeeping),
    reportShares: new ReportSharesService(kysely, clock, activity),
    reportSubscriptions: new ReportSubscriptionsService(kysely, clock),
    onboarding: new OnboardingService(kysely, clock, activity, deps.publicUrl, mailer),
    accountDeletion: new AccountDeletionService(kysely, bodies, clock, activity, media, deps.publicUrl, forgetKept, deps.onBackgroundError),
  };
}

export type Services = ReturnType<typeof createServices>;
