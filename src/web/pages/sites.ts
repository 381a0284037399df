import type { FastifyInstance } from 'fastify';
import type { Site } from '../../services/sites.js';
import type { Stats } from '../../services/stats.js';
import { toDay } from '../../core/time.js';
import { monthLabel, pager, queryString } from '../components.js';
import { pageParam, uiOf, type WebOptions } from '../context.js';
import { html, type SafeHtml } from '../html.js';
import { sendPage } from '../respond.js';

/** One site as a card: what it is and how this month is going, with the way into its report. */
export function siteCard(site: Site, stats: Stats | undefined, month: string): SafeHtml {
  const facts = [site.industry, site.country, site.language, site.geographic_scope].filter(Boolean).join(' · ');
  return html`<li class="card site-card">
  <h2><a href="/app/sites/${site.id}">${site.name ?? `Site ${site.id}`}</a></h2>
  ${site.website_url ? html`<p class="site-url">${site.website_url}</p>` : ''}
  ${facts ? html`<p class="muted small">${facts}</p>` : ''}
  ${
    stats
      ? html`<dl class="mini-stats" aria-label="${monthLabel(month)} so far">
    <div><dt>Articles published</dt><dd>${stats.articles_published}</dd></div>
    <div><dt>Backlinks</dt><dd>${stats.backlinks_acquired}<span class="split">${stats.backlinks_industry} industry · ${stats.backlinks_local} local</span></dd></div>
  </dl>
  <p class="muted small">${monthLabel(month)} so far</p>`
      : ''
  }
  <p><a class="button" href="/app/sites/${site.id}">Open report <span aria-hidden="true">→</span></a></p>
</li>`;
}

/** GET /app: the sites of the signed-in user's own account (staff: theirs, and a way to the rest). */
export async function sitesPages(app: FastifyInstance, options: WebOptions) {
  const { services } = options;

  app.get<{ Querystring: { page?: string } }>('/app', async (request, reply) => {
    const ui = uiOf(request);
    const now = services.clock.now();
    const month = toDay(now).slice(0, 7);
    // Own account only, even for staff (who reach other accounts through the overview).
    const own = { ...ui.actor, staff: false };
    const sites = await services.sites.list(own, { page: pageParam(request.query.page), per_page: 24 });
    const stats = await Promise.all(sites.data.map((site) => services.stats.forRange(site.id, `${month}-01`, toDay(now))));
    const account = await services.uiQueries.account(ui.user.accountId);
    return sendPage(reply, ui, {
      title: 'Your sites',
      active: 'sites',
      body: html`<div class="page-head">
  <div>
    <h1>Your sites</h1>
    <p class="muted">${account?.name ?? ui.user.email} · ${sites.meta.total} ${sites.meta.total === 1 ? 'site' : 'sites'}</p>
  </div>
  <div class="actions"><a class="button" href="/app/connect">API keys and assistants</a></div>
</div>
${
  ui.user.staff
    ? html`<div class="notice notice-info">You are signed in as staff. These are your own account’s sites; <a href="/app/staff">the accounts overview</a> opens every customer’s sites (read-only).</div>`
    : ''
}
${
  sites.data.length === 0
    ? html`<section class="card empty-state">
  <h2>No sites yet</h2>
  <p>Your websites appear here once our content team has set them up. Meanwhile you can <a href="/app/connect">create an API key</a> for your tools.</p>
</section>`
    : html`<ul class="site-grid">${sites.data.map((site, i) => siteCard(site, stats[i], month))}</ul>`
}
${pager(sites.meta, (p) => `/app${queryString({ page: p })}`, 'Sites')}`,
    });
  });
}
