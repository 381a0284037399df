import type { Generated, Insertable, Selectable } from 'kysely';
import type { AnchorType, ArticleStatus, BacklinkCategory, BacklinkStatus } from '../core/values.js';

/** Timestamps are ISO-8601 UTC text, booleans 0/1: the same on SQLite and PostgreSQL. */
type Timestamp = string;
type Flag = number;

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  created_at: Timestamp;
}

export interface UsersTable {
  id: Generated<number>;
  account_id: number;
  email: string;
  password_hash: string;
  staff: Flag;
  created_at: Timestamp;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  user_id: number;
  name: string;
  /** SHA-256 of the key, hex; the key itself is never stored. */
  key_hash: string;
  /** The first characters of the key, shown in the UI to recognise it. */
  display_prefix: string;
  read_only: Flag;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface SitesTable {
  id: Generated<number>;
  account_id: number;
  name: string | null;
  website_url: string | null;
  /** Lower-cased copy of website_url for case-insensitive search on both databases. */
  website_url_lc: string | null;
  language: string | null;
  country: string | null;
  geographic_scope: string | null;
  industry: string | null;
  created_at: Timestamp;
  /** Moves when the site's counters change after its import (migration 016). */
  counts_version: Generated<number>;
}

export interface ArticlesTable {
  id: Generated<number>;
  site_id: number;
  account_id: number;
  title: string | null;
  url: string | null;
  status: ArticleStatus | null;
  published_at: Timestamp | null;
  target_keyword: string | null;
  word_count: number | null;
  featured_image_url: string | null;
  meta_description: string | null;
  body: string;
  current_revision_id: number | null;
  /** JSON of the body's protected links (as GET returns them), written with the body. */
  protected_links: string | null;
  /** `SANITIZER_VERSION` when `body` is that sanitiser's output; null for bodies stored before. */
  body_sanitizer: number | null;
  /** Bumped on every change; the ETag is derived from it. */
  version: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface BacklinksTable {
  id: Generated<number>;
  site_id: number;
  account_id: number;
  acquired_at: Timestamp | null;
  source_domain: string | null;
  source_url: string | null;
  target_url: string | null;
  anchor_text: string | null;
  anchor_type: AnchorType | null;
  status: BacklinkStatus | null;
  category: BacklinkCategory;
}

export interface RevisionsTable {
  id: Generated<number>;
  article_id: number;
  account_id: number;
  title: string | null;
  body: string;
  meta_description: string | null;
  featured_image_url: string | null;
  origin: 'api' | 'mcp' | 'editor' | 'rewrite';
  user_id: number | null;
  api_key_id: number | null;
  mcp_grant_id: number | null;
  reason: string | null;
  created_at: Timestamp;
}

export interface ActivityLogTable {
  id: Generated<number>;
  created_at: Timestamp;
  account_id: number | null;
  user_id: number | null;
  api_key_id: number | null;
  mcp_grant_id: number | null;
  /** `cli`: an operator's command (`anchorage import`), one record per account it touched. */
  channel: 'api' | 'mcp' | 'cli';
  operation: string | null;
  method: string | null;
  path: string | null;
  tool: string | null;
  status: number;
  error: string | null;
  duration_ms: number;
  client_ip: string | null;
  user_agent: string | null;
  request_id: string | null;
}

/** A read-only link to one site's monthly report; the token itself is never stored. */
export interface ReportSharesTable {
  id: Generated<number>;
  account_id: number;
  site_id: number;
  /** Who created it. */
  user_id: number;
  name: string;
  /** SHA-256 of the token, hex. */
  token_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  last_opened_at: Timestamp | null;
}

/** A one-time link to set a user's password (staff onboarding); the token itself is never stored. */
export interface PasswordLinksTable {
  id: Generated<number>;
  user_id: number;
  /** SHA-256 of the token, hex. */
  token_hash: string;
  /** The staff member who created it. */
  created_by: number;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

/** An import file uploaded by staff in the UI: its dry run, then its apply and progress (migration 024). */
export interface ImportUploadsTable {
  id: Generated<number>;
  /** SHA-256 of the unguessable token in the upload's address, hex. */
  token_hash: string;
  /** The staff member who uploaded it. */
  user_id: number;
  /** The `id_hash` of the session it was uploaded in: only that session sees it. */
  session_hash: string;
  size: number;
  /** The dry run's answer (`importPlanJson`); no problems and no sites while `checking`. */
  plan: string;
  /** `checking` and `applying`: a child process of the node that took the step is at work. */
  state: 'checking' | 'refused' | 'planned' | 'applying' | 'applied' | 'failed';
  /** JSON of the rows an apply has written so far (`ImportProgress`). */
  progress: string | null;
  /** JSON of what the apply did (each site's id and counts), or why it (or the check) failed. */
  outcome: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/**
 * An upload's file, stored by its check once it passes and deleted once applied (a file with
 * problems is never stored); only the child processes of the UI import read or write it.
 */
export interface ImportUploadFilesTable {
  upload_id: number;
  bytes: Buffer;
}

/** An address that receives one site's monthly report by e-mail. */
export interface ReportSubscriptionsTable {
  id: Generated<number>;
  account_id: number;
  site_id: number;
  user_id: number;
  address: string;
  /** The one-click unsubscribe token of its e-mails (it can do nothing else). */
  unsubscribe_token: string;
  created_at: Timestamp;
}

/** A monthly report e-mail that went out: never sent twice. */
export interface ReportMailSentTable {
  subscription_id: number;
  /** `YYYY-MM`, the month reported. */
  month: string;
  sent_at: Timestamp;
}

export interface SessionsTable {
  /** SHA-256 of the session id in the cookie. */
  id_hash: string;
  user_id: number | null;
  csrf_token: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** A one-time message for the next page, sealed with the session id (see SessionsService.flash). */
  flash: string | null;
}

export interface EditCountsTable {
  account_id: number;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  count: number;
}

export interface IdempotencyKeysTable {
  account_id: number;
  key: string;
  /** SHA-256 of the operation, article and request body: the same key must mean the same request. */
  fingerprint: string;
  state: 'pending' | 'done';
  /** The stored outcome, JSON. */
  response: string | null;
  created_at: Timestamp;
}

/** Rows per site, UTC day and key, kept with every write: totals and stats sum these. */
export interface BacklinkDayCountsTable {
  site_id: number;
  /** `YYYY-MM-DD` of `acquired_at`, or '' when there is none. */
  day: string;
  category: BacklinkCategory;
  n: number;
}

export interface BacklinkMonthCountsTable {
  site_id: number;
  /** `YYYY-MM` of `acquired_at`, or '' when there is none. */
  month: string;
  category: BacklinkCategory;
  n: number;
}

export interface ArticleDayCountsTable {
  site_id: number;
  /** `YYYY-MM-DD` of `published_at`, or '' when there is none. */
  day: string;
  /** '' when the article has no status. */
  status: ArticleStatus | '';
  n: number;
}

export interface ArticleMonthCountsTable {
  site_id: number;
  /** `YYYY-MM` of `published_at`, or '' when there is none. */
  month: string;
  /** '' when the article has no status. */
  status: ArticleStatus | '';
  n: number;
}

export interface MediaTable {
  key: string;
  content_type: string;
  bytes: Buffer;
  created_at: Timestamp;
}

export interface Database {
  accounts: AccountsTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  sites: SitesTable;
  articles: ArticlesTable;
  backlinks: BacklinksTable;
  revisions: RevisionsTable;
  activity_log: ActivityLogTable;
  report_shares: ReportSharesTable;
  password_links: PasswordLinksTable;
  import_uploads: ImportUploadsTable;
  import_upload_files: ImportUploadFilesTable;
  report_subscriptions: ReportSubscriptionsTable;
  report_mail_sent: ReportMailSentTable;
  sessions: SessionsTable;
  edit_counts: EditCountsTable;
  idempotency_keys: IdempotencyKeysTable;
  media: MediaTable;
  backlink_day_counts: BacklinkDayCountsTable;
  backlink_month_counts: BacklinkMonthCountsTable;
  article_day_counts: ArticleDayCountsTable;
  article_month_counts: ArticleMonthCountsTable;
  oauth_clients: OAuthClientsTable;
  oauth_codes: OAuthCodesTable;
  oauth_grants: OAuthGrantsTable;
  oauth_tokens: OAuthTokensTable;
}

export type Account = Selectable<AccountsTable>;
export type User = Selectable<UsersTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type SiteRow = Selectable<SitesTable>;
export type ArticleRow = Selectable<ArticlesTable>;
export type BacklinkRow = Selectable<BacklinksTable>;
export type RevisionRow = Selectable<RevisionsTable>;
export type NewActivity = Insertable<ActivityLogTable>;

export interface OAuthClientsTable {
  /** Ours for registered clients; the metadata document's https URL for CIMD clients. */
  client_id: string;
  kind: 'dcr' | 'cimd';
  client_name: string | null;
  /** JSON array of the exact redirect URIs. */
  redirect_uris: string;
  /** JSON of the client metadata as accepted. */
  metadata: string;
  /** For CIMD clients: when the document was last fetched. */
  created_at: Timestamp;
}

export interface OAuthCodesTable {
  /** SHA-256 of the authorization code; the code itself is never stored. */
  code_hash: string;
  client_id: string;
  user_id: number;
  redirect_uri: string;
  /** PKCE S256 challenge. */
  code_challenge: string;
  resource: string;
  scope: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  grant_id: number | null;
}

export interface OAuthGrantsTable {
  id: Generated<number>;
  user_id: number;
  account_id: number;
  client_id: string;
  /** Space-separated OAuth scopes: `articles:read`, optionally `articles:write`. */
  scope: string;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface OAuthTokensTable {
  /** SHA-256 of the token; the token itself is never stored. */
  token_hash: string;
  grant_id: number;
  kind: 'access' | 'refresh';
  resource: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** Refresh tokens: when exchanged for a new pair; presenting it again revokes the grant. */
  rotated_at: Timestamp | null;
  revoked_at: Timestamp | null;
}
