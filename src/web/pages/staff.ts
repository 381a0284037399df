import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.js';
import { toDay } from '../../core/time.js';
import { day, tableWrap } from '../components.js';
import { idParam, type UiContext, uiOf, type WebOptions } from '../context.js';
import { html } from '../html.js';
import { sendPage } from '../respond.js';
import { siteCard } from './sites.js';

function staffOnly(request: FastifyRequest): UiContext {
  const ui = uiOf(request);
  if (!ui.user.staff) throw new AppError('forbidden', 'This page is for Anchorage staff only.');
  return ui;
}

/** The staff overview: every account, its users and sites; reading only. */
export async function staffPages(app: FastifyInstance, options: WebOptions) {
  const { services } = options;

  app.get('/app/staff', async (request, reply) => {
    const ui = staffOnly(request);
    const accounts = await services.uiQueries.accounts();
    return sendPage(reply, ui, {
      title: 'Accounts',
      active: 'staff',
      body: html`<div class="page-head">
  <div>
    <h1>Accounts</h1>
    <p class="muted">Every customer account. As staff you can open any account’s site reports and articles; changing them is left to their owners.</p>
  </div>
</div>
<section class="card">
  ${tableWrap(
    'Accounts',
    html`<tr><th scope="col">Account</th><th scope="col">Users</th><th scope="col" class="num">Sites</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>`,
    accounts.map(
      (account) => html`<tr${account.id === ui.user.accountId ? html` class="current"` : ''}>
  <td><strong>${account.name}</strong>${account.id === ui.user.accountId ? html` <span class="badge badge-current">yours</span>` : ''}</td>
  <td>${account.users.map((user, i) => html`${i > 0 ? html`<br>` : ''}${user.email}${user.staff ? html` <span class="badge badge-staff">staff</span>` : ''}`)}</td>
  <td class="num">${account.sites}</td>
  <td>${day(account.created_at)}</td>
  <td>${account.sites > 0 ? html`<a class="button small" href="/app/staff/accounts/${account.id}">View sites<span class="visually-hidden"> of ${account.name}</span></a>` : html`<span class="muted small">no sites</span>`}</td>
</tr>`,
    ),
    'No accounts yet.',
  )}
</section>`,
    });
  });

  app.get<{ Params: { id: string } }>('/app/staff/accounts/:id', async (request, reply) => {
    const ui = staffOnly(request);
    const accountId = idParam(request.params.id, 'account');
    const account = await services.uiQueries.account(accountId);
    if (!account) throw new AppError('not_found', 'No account with this id.');
    const sites = await services.uiQueries.sitesOfAccount(accountId);
    const now = services.clock.now();
    const month = toDay(now).slice(0, 7);
    const stats = await Promise.all(sites.map((site) => services.stats.forRange(site.id, `${month}-01`, toDay(now))));
    return sendPage(reply, ui, {
      title: account.name,
      active: 'staff',
      body: html`<nav class="crumbs" aria-label="Breadcrumb"><a href="/app/staff">Accounts</a> <span aria-hidden="true">/</span> <span aria-current="page">${account.name}</span></nav>
<div class="page-head"><div><h1>${account.name}</h1><p class="muted">${sites.length} ${sites.length === 1 ? 'site' : 'sites'} · read-only staff view</p></div></div>
${sites.length === 0 ? html`<p class="empty">This account has no sites.</p>` : html`<ul class="site-grid">${sites.map((site, i) => siteCard(site, stats[i], month))}</ul>`}`,
    });
  });
}
