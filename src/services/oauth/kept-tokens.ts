import type { KeptRows } from '../../core/kept-rows.js';
import type { Scope } from '../actor.js';

/** An unrevoked access token of an open connection, as a node keeps it (by the token's hash). */
export interface KeptAccessToken {
  grantId: number;
  userId: number;
  accountId: number;
  scopes: readonly Scope[];
  /** The MCP addresses it is bound to. */
  resources: readonly string[];
  /** When it expires (ms since the epoch): compared with the clock on every use. */
  expiresAt: number;
}

/** The access tokens a node keeps, shared by everything that revokes one (`forget` as it commits). */
export type KeptAccessTokens = KeptRows<string, KeptAccessToken>;
