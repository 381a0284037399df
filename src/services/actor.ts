/** Where a call came from: the channels of the activity log and the origins of revisions. */
export type Channel = 'api' | 'mcp' | 'editor' | 'rewrite';

export type Scope = 'read' | 'write';

export type Credential =
  | { kind: 'api_key'; id: number }
  | { kind: 'mcp_grant'; id: number }
  | { kind: 'session' }
  | { kind: 'operator' };

/** The request a call belongs to, for its activity-log record. */
export interface RequestInfo {
  id: string;
  operation: string | null;
  method: string | null;
  path: string | null;
  tool: string | null;
  clientIp: string | null;
  userAgent: string | null;
  startedAt: number;
  /** Set once the call's activity record is stored (a write stores it with the change). */
  recorded?: boolean;
}

/** Who is acting: every service call carries one (Directus's "accountability"). */
export interface Actor {
  accountId: number;
  userId: number;
  credential: Credential;
  channel: Channel;
  /** Staff may read every account through API keys; never through MCP grants. */
  staff: boolean;
  scopes: readonly Scope[];
  request: RequestInfo | null;
}

export function credentialColumns(actor: Actor): { api_key_id: number | null; mcp_grant_id: number | null } {
  return {
    api_key_id: actor.credential.kind === 'api_key' ? actor.credential.id : null,
    mcp_grant_id: actor.credential.kind === 'mcp_grant' ? actor.credential.id : null,
  };
}
