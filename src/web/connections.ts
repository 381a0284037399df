import type { FastifyInstance } from 'fastify';
import { AppError } from '../core/errors.js';
import type { GrantSummary } from '../services/oauth/index.js';
import { badge, csrfField, notice, tableWrap, timestamp } from './components.js';
import { requireSignedIn, textField, type UiContext, uiOf, type WebOptions } from './context.js';
import { html, type SafeHtml } from './html.js';
import { sendPage } from './respond.js';

function connectionRows(ui: UiContext, grants: GrantSummary[]): SafeHtml[] {
  return grants.map((grant) => {
    const name = grant.clientName ?? 'Unnamed application';
    return html`<tr data-grant-id="${grant.id}">
  <td><strong>${name}</strong></td>
  <td>${grant.scopes.includes('write') ? badge('read and edit', 'readwrite') : badge('read-only', 'readonly')}</td>
  <td>${timestamp(grant.createdAt)}</td>
  <td>${grant.lastUsedAt ? timestamp(grant.lastUsedAt) : html`<span class="muted">never</span>`}</td>
  <td><form method="post" action="/app/connections/${grant.id}/revoke" data-confirm="Disconnect “${name}”? It loses access at once.">
    ${csrfField(ui.session.csrfToken)}
    <button type="submit" class="small danger">Revoke<span class="visually-hidden"> ${name}</span></button>
  </form></td>
</tr>`;
  });
}

/** "Connected apps": the AI assistants a user allowed through the MCP sign-in, each revocable. */
export async function connectionsRoutes(app: FastifyInstance, options: WebOptions) {
  const { services, settings } = options;
  app.addHook('preHandler', requireSignedIn(options));

  app.get<{ Querystring: { revoked?: string } }>('/app/connections', async (request, reply) => {
    const ui = uiOf(request);
    const revoked = textField(request.query.revoked);
    const message = revoked === '1' ? notice('success', 'The connection was revoked. The application can no longer use your account.') : '';
    const grants = await services.oauth.grants(ui.user.userId);
    return sendPage(reply, ui, {
      title: 'Connected apps',
      active: 'connections',
      // Asks before a Revoke (data-confirm) once JavaScript runs.
      scripts: ['/assets/copy.js'],
      body: html`<div class="page-head">
  <div>
    <h1>Connected apps</h1>
    <p class="muted">AI assistants such as Claude or ChatGPT connect to Anchorage at <code>${settings.mcpPublicUrl}</code>. Each one you allowed is listed here; it sees your own account only.</p>
  </div>
</div>
${message}
<section class="card" aria-labelledby="connections-h">
  <h2 id="connections-h">Your connections <span class="count">${grants.length} active</span></h2>
  ${tableWrap(
    'Connected apps',
    html`<tr><th scope="col">Application</th><th scope="col">Access</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>`,
    connectionRows(ui, grants),
    'No connected apps yet. Add the address above as a connector in your assistant, sign in and press Allow.',
  )}
</section>`,
    });
  });

  app.post<{ Params: { id: string } }>('/app/connections/:id/revoke', async (request, reply) => {
    const ui = uiOf(request);
    const id = request.params.id;
    // Ids are 32-bit integers on PostgreSQL; anything else names no connection.
    const valid = /^[1-9]\d{0,9}$/.test(id) && Number(id) <= 2_147_483_647;
    // Another user's connection, an unknown one and one revoked already are all simply not found.
    if (!valid || !(await services.oauth.revokeGrant(ui.user.userId, Number(id)))) {
      throw new AppError('not_found', 'No active connection with this id. It may have been revoked already.');
    }
    return reply.redirect('/app/connections?revoked=1', 303);
  });
}
