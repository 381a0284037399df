import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, type Harness, startHarness, testDatabaseUrl } from '../helpers/harness.js';
import { authorizationUrl, authorizeInBrowser, manualGrant, pkce, postForm, rawMcp, registerClient } from '../helpers/oauth-client.js';

/**
 * One refresh token or authorization code sent twice at the same moment: one request wins, the
 * other is a replay and revokes the connection, the winner's tokens included. On PostgreSQL the two
 * requests reach two nodes of one deployment (one database, one PUBLIC_URL); on SQLite, one node.
 */

let nodeA: Harness;
let nodeB: Harness;
let base: string;
/** Where each node listens (B's PUBLIC_URL is A's, as behind a load balancer). */
let addresses: [string, string];
let customer: Awaited<ReturnType<typeof createCustomer>>;

const listening = (h: Harness) => `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;

beforeAll(async () => {
  // Every revoked token the tests try counts against the address's limit without a valid token.
  const env = { UNAUTHENTICATED_PER_MINUTE: '1000' };
  nodeA = await startHarness({ listen: true, env });
  nodeB = testDatabaseUrl ? await startHarness({ listen: true, env, nodeOf: nodeA }) : nodeA;
  base = nodeA.settings.publicUrl;
  addresses = [listening(nodeA), listening(nodeB)];
  customer = await createCustomer(nodeA.services);
});
afterAll(async () => {
  if (nodeB !== nodeA) await nodeB?.close();
  await nodeA?.close();
});

/** The same token request at both nodes at once: the winner's answer and the loser's. */
async function race(form: Record<string, string>): Promise<{ winner: Record<string, unknown>; loser: Record<string, unknown> }> {
  const answers = await Promise.all(addresses.map((address) => postForm(address, '/oauth/token', form)));
  const won = answers.filter((answer) => answer.status === 200);
  expect(won).toHaveLength(1);
  const lost = answers.find((answer) => answer.status !== 200)!;
  expect(lost.status).toBe(400);
  return { winner: won[0]!.body, loser: lost.body };
}

/** The winner's tokens are revoked: its access token fails at both nodes, its refresh token too. */
async function expectRevoked(tokens: Record<string, unknown>, clientId: string): Promise<void> {
  for (const address of addresses) expect((await rawMcp(address, tokens.access_token as string)).status).toBe(401);
  const refreshed = await postForm(base, '/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string, client_id: clientId });
  expect(refreshed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
}

const rounds = 6;

describe('replays raced against each other', () => {
  it('a refresh token sent to both nodes at once revokes the connection, the winner’s new tokens included', async () => {
    for (let round = 0; round < rounds; round++) {
      const grant = await manualGrant(base, customer.email);
      const { winner, loser } = await race({
        grant_type: 'refresh_token',
        refresh_token: grant.tokens.refresh_token as string,
        client_id: grant.client.clientId,
      });
      expect(loser).toEqual({ error: 'invalid_grant', error_description: 'The refresh token was used already; the connection has been revoked.' });
      await expectRevoked(winner, grant.client.clientId);
      expect((await rawMcp(base, grant.tokens.access_token as string)).status).toBe(401);
    }
  });

  it('an authorization code sent to both nodes at once revokes what the winner was issued', async () => {
    const client = await registerClient(base);
    for (let round = 0; round < rounds; round++) {
      const { verifier, challenge } = pkce();
      const { callback } = await authorizeInBrowser(base, authorizationUrl(base, client, challenge), customer.email);
      const { winner, loser } = await race({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        code_verifier: verifier,
        redirect_uri: client.redirectUri,
        client_id: client.clientId,
      });
      expect(loser).toEqual({ error: 'invalid_grant', error_description: 'The authorization code was used already.' });
      await expectRevoked(winner, client.clientId);
    }
  });

  it('the same, both calls started in one turn of the event loop (each node’s service)', async () => {
    const settle = async (calls: Promise<unknown>[]) => {
      const outcomes = await Promise.allSettled(calls);
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      expect(won).toHaveLength(1);
      expect(outcomes.find((outcome) => outcome.status === 'rejected')!.reason).toMatchObject({ error: 'invalid_grant' });
      return (won[0] as PromiseFulfilledResult<Record<string, unknown>>).value;
    };
    for (let round = 0; round < rounds; round++) {
      const grant = await manualGrant(base, customer.email);
      const input = { refreshToken: grant.tokens.refresh_token as string, clientId: grant.client.clientId, resource: undefined };
      const refreshed = await settle([nodeA.services.oauth.refresh(input), nodeB.services.oauth.refresh(input)]);
      await expectRevoked(refreshed, grant.client.clientId);

      const client = await registerClient(base);
      const { verifier, challenge } = pkce();
      const { callback } = await authorizeInBrowser(base, authorizationUrl(base, client, challenge), customer.email);
      const exchange = { code: callback.searchParams.get('code')!, clientId: client.clientId, redirectUri: client.redirectUri, codeVerifier: verifier, resource: undefined };
      const exchanged = await settle([nodeA.services.oauth.exchangeCode(exchange), nodeB.services.oauth.exchangeCode(exchange)]);
      await expectRevoked(exchanged, client.clientId);
    }
  });

  it('a refused exchange still spends the code, and a later replay of it finds nothing to revoke', async () => {
    const client = await registerClient(base);
    const { verifier, challenge } = pkce();
    const { callback } = await authorizeInBrowser(base, authorizationUrl(base, client, challenge), customer.email);
    const code = callback.searchParams.get('code')!;
    const form = { grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, client_id: client.clientId };
    expect((await postForm(base, '/oauth/token', { ...form, code_verifier: pkce().verifier })).body.error_description).toBe(
      'The PKCE code_verifier does not match.',
    );
    expect(await postForm(addresses[1], '/oauth/token', { ...form, code_verifier: verifier })).toEqual({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'The authorization code was used already.' },
    });
  });
});
