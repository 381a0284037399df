import type { AddressInfo } from 'node:net';
import { setTimeout } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/core/secrets.js';
import { sqliteTokenTriggers } from '../../src/db/migrations/025_token_notices.js';
import { createCustomer, dialectName, type Harness, runElsewhere, startHarness, testDatabaseUrl } from '../helpers/harness.js';
import { connectWithOAuth, manualGrant, postForm, rawMcp } from '../helpers/oauth-client.js';

// A node keeps the access tokens it has accepted, as it keeps API keys: a tool call's token costs
// no query. Revocation, deletion and expiry still take effect: at once on the node that revokes,
// within the change notices' bound on the others.

let h: Harness;
let base: string;
let customer: Awaited<ReturnType<typeof createCustomer>>;

beforeAll(async () => {
  // The refused tokens of these tests count against the address's limit without a valid token.
  h = await startHarness({ listen: true, env: { UNAUTHENTICATED_PER_MINUTE: '1000' } });
  base = h.settings.publicUrl;
  customer = await createCustomer(h.services);
});
afterAll(() => h.close());

/** Runs `statement` on a connection of its own, as the CLI, another node or an outside script would. */
const elsewhere = (statement: string) => runElsewhere(h, statement);

/** Runs `statement` elsewhere with migration 025's `trigger` off: a change no node hears of. */
async function unheard(table: string, trigger: string, statement: string): Promise<void> {
  if (dialectName === 'postgres') {
    await elsewhere(`alter table ${table} disable trigger ${trigger}`);
    try {
      await elsewhere(statement);
    } finally {
      await elsewhere(`alter table ${table} enable trigger ${trigger}`);
    }
    return;
  }
  await elsewhere(`drop trigger ${trigger}`);
  try {
    await elsewhere(statement);
  } finally {
    await elsewhere(sqliteTokenTriggers.find((create) => create.startsWith(`create trigger ${trigger} `))!);
  }
}

/** A new connection whose access token this node has accepted (and, on PostgreSQL, has heard its heartbeat). */
async function keptGrant(): Promise<{ token: string; refreshToken: string; clientId: string; grantId: number }> {
  const grant = await manualGrant(base, customer.email);
  const token = grant.tokens.access_token as string;
  for (let i = 0; i < 3; i++) {
    expect((await rawMcp(base, token)).status).toBe(200);
    await setTimeout(100);
  }
  const row = await h.services.db.kysely.selectFrom('oauth_tokens').select('grant_id').where('token_hash', '=', sha256(token)).executeTakeFirstOrThrow();
  return { token, refreshToken: grant.tokens.refresh_token as string, clientId: grant.client.clientId, grantId: row.grant_id };
}

const revokeAt = (address: string, token: string) => postForm(address, '/oauth/revoke', { token });

describe('access tokens kept in memory', () => {
  it('a kept token costs no query; a revocation elsewhere is heard and refused within 100 ms', async () => {
    const { token } = await keptGrant();
    // Revoked without its notice: the node answers from memory, so it did not look the token up.
    await unheard('oauth_tokens', 'oauth_tokens_changed', `update oauth_tokens set revoked_at = '2026-11-15T12:00:00Z' where token_hash = '${sha256(token)}'`);
    expect((await rawMcp(base, token)).status).toBe(200);
    // The trigger's notice (PostgreSQL) or count (SQLite) reaches the node: looked up again, and refused.
    await elsewhere(`update oauth_tokens set revoked_at = '2026-11-15T12:00:00Z' where token_hash = '${sha256(token)}'`);
    await setTimeout(150);
    const refused = await rawMcp(base, token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('a connection revoked elsewhere, or its token deleted, is refused within 100 ms', async () => {
    const revoked = await keptGrant();
    await elsewhere(`update oauth_grants set revoked_at = '2026-11-15T12:00:00Z' where id = ${revoked.grantId}`);
    const deleted = await keptGrant();
    await elsewhere(`delete from oauth_tokens where token_hash = '${sha256(deleted.token)}'`);
    await setTimeout(150);
    expect((await rawMcp(base, revoked.token)).status).toBe(401);
    expect((await rawMcp(base, deleted.token)).status).toBe(401);
  });

  it('a connection deleted elsewhere (its tokens, then it) is refused within 100 ms', async () => {
    const { token, grantId } = await keptGrant();
    await elsewhere(`update oauth_codes set grant_id = null where grant_id = ${grantId}`);
    await unheard('oauth_tokens', 'oauth_tokens_deleted', `delete from oauth_tokens where grant_id = ${grantId}`);
    expect((await rawMcp(base, token)).status).toBe(200);
    await elsewhere(`delete from oauth_grants where id = ${grantId}`);
    await setTimeout(150);
    expect((await rawMcp(base, token)).status).toBe(401);
  });

  it('a kept token is refused once the clock passes its hour, with no notice', async () => {
    const { token } = await keptGrant();
    const start = h.clock.current;
    try {
      h.clock.set(new Date(start.getTime() + 3600_000 - 1000).toISOString());
      expect((await rawMcp(base, token)).status).toBe(200);
      h.clock.set(new Date(start.getTime() + 3600_000).toISOString());
      const expired = await rawMcp(base, token);
      expect(expired.status).toBe(401);
      expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
    } finally {
      h.clock.current = start;
    }
  });

  it('a token revoked on this node is refused at once, and the connection’s other tokens still work', async () => {
    const { token, refreshToken, clientId } = await keptGrant();
    const refreshed = await postForm(base, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
    expect(refreshed.status).toBe(200);
    const next = refreshed.body.access_token as string;
    expect((await rawMcp(base, next)).status).toBe(200);
    expect((await revokeAt(base, token)).status).toBe(200);
    expect((await rawMcp(base, token)).status).toBe(401);
    expect((await rawMcp(base, next)).status).toBe(200);
  });

  it('a refresh leaves kept tokens kept; its rotated token presented again revokes the connection at once', async () => {
    const { token, refreshToken, clientId } = await keptGrant();
    const other = await keptGrant();
    await unheard('oauth_tokens', 'oauth_tokens_changed', `update oauth_tokens set revoked_at = '2026-11-15T12:00:00Z' where token_hash = '${sha256(other.token)}'`);
    const refresh = () => postForm(base, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
    const refreshed = await refresh();
    expect(refreshed.status).toBe(200);
    await setTimeout(150);
    // No node was told to forget: the other connection's token is still answered from memory.
    expect((await rawMcp(base, other.token)).status).toBe(200);
    // The access token a refresh replaced lives out its hour.
    expect((await rawMcp(base, token)).status).toBe(200);
    const next = refreshed.body.access_token as string;
    expect((await rawMcp(base, next)).status).toBe(200);
    expect(await refresh()).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await rawMcp(base, token)).status).toBe(401);
    expect((await rawMcp(base, next)).status).toBe(401);
  });

  it('the official client’s calls stop at once when the user revokes the connection', async () => {
    const { client, provider } = await connectWithOAuth(base, customer.email, { mode: 'auto' });
    try {
      expect((await client.callTool({ name: 'list_sites', arguments: {} })).isError).toBeFalsy();
      const actor = (await h.services.oauth.authenticate(provider.tokens()!.access_token, `${base}/mcp`, null))!;
      expect(await h.services.oauth.revokeGrant(customer.userId, actor.credential.kind === 'mcp_grant' ? actor.credential.id : 0)).toBe(true);
      await expect(client.callTool({ name: 'list_sites', arguments: {} })).rejects.toThrow();
    } finally {
      await client.close();
    }
  });
});

describe.skipIf(!testDatabaseUrl)('PostgreSQL: two nodes keep tokens, and hear each other’s revocations', () => {
  let nodeB: Harness;
  const listening = (node: Harness) => `http://127.0.0.1:${(node.app.server.address() as AddressInfo).port}`;
  beforeAll(async () => {
    nodeB = await startHarness({ listen: true, nodeOf: h, env: { UNAUTHENTICATED_PER_MINUTE: '1000' } });
  });
  afterAll(() => nodeB?.close());

  /** A connection both nodes have accepted the token of, and keep. */
  async function keptOnBoth(): Promise<{ token: string; refreshToken: string }> {
    const { token, refreshToken } = await keptGrant();
    for (let i = 0; i < 3; i++) {
      expect((await rawMcp(listening(nodeB), token)).status).toBe(200);
      await setTimeout(100);
    }
    return { token, refreshToken };
  }

  it('a token revoked at one node is refused at once there and within 100 ms at the other', async () => {
    const { token } = await keptOnBoth();
    expect((await revokeAt(listening(nodeB), token)).status).toBe(200);
    expect((await rawMcp(listening(nodeB), token)).status).toBe(401);
    await setTimeout(150);
    expect((await rawMcp(listening(h), token)).status).toBe(401);
  });

  it('a connection revoked at one node (its refresh token) is refused at the other within 100 ms', async () => {
    const { token, refreshToken } = await keptOnBoth();
    expect((await revokeAt(listening(h), refreshToken)).status).toBe(200);
    expect((await rawMcp(listening(h), token)).status).toBe(401);
    await setTimeout(150);
    expect((await rawMcp(listening(nodeB), token)).status).toBe(401);
  });

  it('the official client stops within 100 ms when the user revokes the connection at the other node', async () => {
    const { client, provider } = await connectWithOAuth(base, customer.email, { mode: 'legacy' });
    try {
      for (let i = 0; i < 3; i++) {
        expect((await client.callTool({ name: 'list_sites', arguments: {} })).isError).toBeFalsy();
        await setTimeout(100);
      }
      const actor = (await nodeB.services.oauth.authenticate(provider.tokens()!.access_token, `${base}/mcp`, null))!;
      expect(await nodeB.services.oauth.revokeGrant(customer.userId, actor.credential.kind === 'mcp_grant' ? actor.credential.id : 0)).toBe(true);
      await setTimeout(150);
      await expect(client.callTool({ name: 'list_sites', arguments: {} })).rejects.toThrow();
    } finally {
      await client.close();
    }
  });
});
